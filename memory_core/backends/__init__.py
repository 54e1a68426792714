"""Model backends behind one small interface (domain.model_port.ModelBackend), chosen by configuration.

`get_backend(settings)` returns the process's backend: `local` (trained gate, rule extractor, local
embedding; the default when no API key is set) or `openai` (any OpenAI-compatible endpoint). One
instance per process and configuration: loading the local models takes a second, so it is done once.
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import replace

from memory_core.adapters.config import Settings, get_settings
from memory_core.domain.model_port import ExtractionContext, Fact, GateDecision, ModelBackend, Usage
from memory_core.domain.policy import POLICY_THRESHOLD
from memory_core.domain.protected_topics import without_passing_mentions

BACKENDS = ("local", "openai")

_CACHE: dict[tuple, ModelBackend] = {}
_LOCK = threading.Lock()


# A message a rule reads a typed fact from passes the gate at least this sure (above both thresholds)...
RULE_READ_REMEMBER = 0.75
# ...and is no special category for the gate unless the sentence names one (the rule's value is a name,
# a number of days, a weekday: never the protected detail).
RULE_READ_SPECIAL = 0.45
# A message telling of an injury or a pain ("me he roto el brazo") is a special category (health) this sure, and
# worth remembering as the labelled sets say of health lines: the policy then refuses it.
INJURY_SPECIAL = 0.9


class LocalBackend:
    """The offline backend: LocalGate + LocalExtractor + LocalEmbedder, no network, no weights downloaded."""

    name = "local"

    def __init__(self, gate=None, extractor=None, embedder=None):
        from memory_core.backends.local_embedder import LocalEmbedder
        from memory_core.backends.local_extractor import LocalExtractor
        from memory_core.backends.local_gate import LocalGate

        self.gate = gate or LocalGate()
        # The extractor judges each sentence with the gate: several facts from one message, none from
        # its pleasantries, and a special category refused sentence by sentence.
        self.extractor = extractor or LocalExtractor(judge=self.gate.judge)
        self.embedder = embedder or LocalEmbedder()
        self.embed_model = self.embedder.model_name

    def decide(self, message: str, previous_assistant: str | None) -> tuple[GateDecision, Usage]:
        return self.decide_many([(message, previous_assistant)])[0]

    def decide_many(self, messages: list[tuple[str, str | None]]) -> list[tuple[GateDecision, Usage]]:
        """The gate's answers, sentence by sentence; a sentence a rule reads a typed fact from ("háblame de
        tú", "tengo dos críos, Pau y Marina") is worth remembering, and not a special category unless it
        names one."""
        out = []
        for (message, previous), (decision, usage) in zip(messages, self.gate.decide_many(messages)):
            masked = without_passing_mentions(message) if decision.special >= POLICY_THRESHOLD else message
            if masked != message:
                # A protected word that only names a cause, a field or an event ("a charity race for mental
                # health", "an LGBTQ art show"), or a passing feeling ("estuve súper nerviosa"): the gate judges
                # the message without it for special categories.
                decision = replace(decision, special=min(decision.special,
                                                         self.gate.decide_many([(masked, previous)])[0][0].special))
            decision = self.extractor.instructs(message, self.extractor.judged_as_stated(message, previous, decision))
            read, protected = self.extractor.rule_reads(message, previous)
            if read:
                decision = replace(decision, remember=max(decision.remember, RULE_READ_REMEMBER),
                                   special=decision.special if protected else min(decision.special, RULE_READ_SPECIAL))
            elif decision.special >= POLICY_THRESHOLD and self.extractor.trades_with_care(message):
                # The business trading with a doctor or physio: the care word is no one's health.
                decision = replace(decision, special=min(decision.special, RULE_READ_SPECIAL))
            if not read and not decision.passes and self.extractor.writer_notes(message):
                # A first-person statement of the writer's life the gate was less sure of: the extractor keeps it.
                decision = replace(decision, remember=max(decision.remember, RULE_READ_REMEMBER))
            if self.extractor.tells_injury(message):
                decision = replace(decision, remember=max(decision.remember, RULE_READ_REMEMBER),
                                   special=max(decision.special, INJURY_SPECIAL))
            out.append((decision, usage))
        return out

    def extract(self, context: ExtractionContext) -> tuple[list[Fact], Usage]:
        return self.extractor.extract(context)

    def embed(self, texts: list[str]) -> tuple[list[list[float]], Usage]:
        vectors = self.embedder.embed(texts)
        # Local models cost nothing; tokens are estimated (4 characters each) so volumes stay comparable.
        return vectors, Usage(purpose="embed", model=self.embed_model,
                              input_tokens=sum(len(t) for t in texts) // 4)

    def warm_up(self) -> None:
        """Train or load the gate, its sentence encoder and the embedding model now, not on the first message."""
        self.gate.decide("hola", None)  # models() alone leaves the sentence encoder (~5 s) for the first message
        self.embedder.warm_up()


def _key(settings: Settings) -> tuple:
    name = settings.backend_name
    if name == "openai":
        # The key itself never sits in a long-lived structure: only its digest.
        digest = hashlib.sha256((settings.openai_api_key or "").encode()).hexdigest()
        return name, settings.openai_base_url, digest
    return name, str(settings.data_dir)


def get_backend(settings: Settings | None = None) -> ModelBackend:
    """The configured backend, built once per process and configuration."""
    settings = settings or get_settings()
    name = settings.backend_name
    if name not in BACKENDS:
        raise ValueError(f"MEMORIA_BACKEND must be one of {BACKENDS}, not {name!r}")
    key = _key(settings)
    backend = _CACHE.get(key)
    if backend is None:
        with _LOCK:
            backend = _CACHE.get(key)
            if backend is None:
                backend = _build(name, settings)
                _CACHE[key] = backend
    return backend


def _build(name: str, settings: Settings) -> ModelBackend:
    if name == "openai":
        from memory_core.backends.openai_backend import OpenAIBackend

        if not settings.openai_api_key:
            raise ValueError("the openai backend needs OPENAI_API_KEY")
        return OpenAIBackend.from_settings(settings)
    from memory_core.backends.local_gate import LocalGate

    return LocalBackend(gate=LocalGate(cache_dir=settings.data_dir / "models"))

"""Build the gate's conversational training rows from LoCoMo conversations 26, 30, 41, 42 and 43 only.

Usage: python evals/gate_conversational.py [--locomo DIR] > rows.jsonl

Each turn is split into units as the local backend splits messages (`local_extractor.units`). A unit
is a positive (a durable personal fact) when its turn is the evidence of one of the session's
`observation` lines and it shares at least two content words with that line; a phatic unit, a
question, or a unit of a turn no observation cites is a negative. Units on a special category (the
seeded exclusion patterns: health, religion, politics, sexual orientation...) are labelled as such.
The held-out conversations (44, 47, 48, 49, 50) are never read.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memory_core.backends.local_extractor.clauses import is_question  # noqa: E402
from memory_core.backends.local_extractor.units import units  # noqa: E402
from memory_core.domain.text import fold  # noqa: E402

TRAINING_CONVERSATIONS = ("26", "30", "41", "42", "43")  # never 44, 47, 48, 49, 50: held out
LOCOMO = Path("/work/shared/benchmarks/locomo10")
# Negatives are far more numerous: keep this many per positive so the in-domain balance holds.
NEGATIVES_PER_POSITIVE = 1.0
MAX_POSITIVES_PER_CONVERSATION = 60
# A durable fact about the writer says so: "I", "my", "we"... (LoCoMo's observations also cite opinions).
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b")
SEED = 13
_STOP = set("""the a an and or but of to in on at for with from by is are was were be been being it its this that
i me my we our us you your he she they them their his her has have had do does did not no so just really very
about into than then there here when what which who will would can could also some all any more most much
get got going go went""".split())
_SPECIAL = re.compile(
    r"\b(diabet\w*|cancer|depress\w*|anxiety|pregnan\w*|hiv|illness|disease|diagnos\w*|medication|therapy|"
    r"surgery|religio\w*|catholic|muslim|jewish|church|mosque|synagogue|atheist|political party|votes? for|"
    r"trade union|gay|lesbian|bisexual|homosexual|heterosexual|transgender|trans woman|trans man|lgbtq?\w*|"
    r"sexual orientation|ethnic\w*|racial|fingerprint|biometric\w*|dna|genetic\w*|mental health)\b")


def _content(text: str) -> set[str]:
    return {w[:6] for w in re.findall(r"[a-z]{3,}", fold(text)) if w not in _STOP}


def rows_of(conversation: dict, name: str, rng: random.Random) -> list[dict]:
    positives, negatives = [], []
    sessions = sorted((k for k in conversation if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
    for key in sessions:
        evidence: dict[str, list[str]] = {}
        for lines in (conversation.get(f"{key}_observation") or {}).values():
            for line in lines:
                text, ids = line[0], line[1] if isinstance(line[1], list) else [line[1]]
                for dia in ids:
                    evidence.setdefault(dia, []).append(text)
        for turn in conversation[key]:
            observed = evidence.get(turn["dia_id"], [])
            for unit in units(turn["text"]):
                base = {"previous_assistant": None, "scope": "personal", "corrects": False, "policy": "none"}
                if unit.phatic or is_question(unit.sentence):
                    negatives.append({**base, "text": unit.raw, "remember": False, "category": "nothing",
                                      "scope": "none", "expect": "ignore"})
                    continue
                words = _content(unit.text)
                first_person = bool(_FIRST_PERSON.search(fold(unit.text)))
                if observed and first_person and len(unit.text.split()) >= 5 and \
                        any(len(words & _content(o)) >= 2 for o in observed):
                    special = bool(_SPECIAL.search(fold(unit.text)))
                    positives.append({**base, "text": unit.text, "remember": True, "category": "person",
                                      "policy": "special" if special else "none",
                                      "expect": "refuse" if special else "learn"})
                elif not observed:
                    negatives.append({**base, "text": unit.text, "remember": False, "category": "nothing",
                                      "scope": "none", "expect": "ignore"})
    rng.shuffle(positives)
    positives = positives[:MAX_POSITIVES_PER_CONVERSATION]
    rng.shuffle(negatives)
    negatives = negatives[: int(len(positives) * NEGATIVES_PER_POSITIVE)]
    out = positives + negatives
    for i, row in enumerate(out, 1):
        row["id"] = f"locomo-{name}-{i:03d}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    args = parser.parse_args()
    rng = random.Random(SEED)
    keys = ("id", "text", "previous_assistant", "remember", "category", "scope", "corrects", "policy", "expect")
    for name in TRAINING_CONVERSATIONS:
        conversation = json.loads((args.locomo / f"{name}.json").read_text(encoding="utf-8"))
        for row in rows_of(conversation, name, rng):
            print(json.dumps({k: row[k] for k in keys}, ensure_ascii=False))


if __name__ == "__main__":
    main()

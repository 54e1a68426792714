"""Score the local extractor on evals/extraction.jsonl and print precision/recall as one JSON object.

Usage: python evals/extraction_report.py [--dataset PATH] [--verbose]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memory_core.backends.local_extractor import LocalExtractor  # noqa: E402
from memory_core.domain.model_port import ExtractionContext, KnownContact  # noqa: E402

DATASET = ROOT / "evals" / "extraction.jsonl"


def load(path: Path = DATASET) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def context_of(row: dict) -> ExtractionContext:
    contacts = tuple(KnownContact(id=c["id"], name=c["name"], kind=c["kind"], tax_id=c.get("tax_id"),
                                  aliases=tuple(c.get("aliases") or ())) for c in row.get("contacts", []))
    known = {subject: tuple(names) for subject, names in (row.get("known_attributes") or {}).items()}
    return ExtractionContext(message=row["text"], previous_assistant=row.get("previous_assistant"),
                             contacts=contacts, known_attributes=known,
                             today=dt.date.fromisoformat(row["today"]))


def _matches(expected: dict, fact) -> bool:
    if (fact.subject, fact.attribute, fact.value) != (expected["subject"], expected["attribute"], expected["value"]):
        return False
    return "event_date" not in expected or (fact.event_date and fact.event_date.isoformat() == expected["event_date"])


def evaluate(rows: list[dict], extractor=None) -> dict:
    """Expected facts found exactly (recall), produced facts that were expected (precision), misses listed."""
    extractor = extractor or LocalExtractor()
    expected_total = found = produced = spurious = 0
    corrections_expected = corrections_found = 0
    misses: list[dict] = []
    for row in rows:
        facts, _usage = extractor.extract(context_of(row))
        produced += len(facts)
        hits = [e for e in row["expected"] if any(_matches(e, f) for f in facts)]
        extra = [f for f in facts if not any(_matches(e, f) for e in row["expected"])]
        expected_total += len(row["expected"])
        found += len(hits)
        spurious += len(extra)
        if row.get("known_attributes"):
            corrections_expected += len(row["expected"])
            corrections_found += len(hits)
        if len(hits) < len(row["expected"]) or extra:
            misses.append({"id": row["id"], "text": row["text"],
                           "missed": [e for e in row["expected"] if e not in hits],
                           "spurious": [{"subject": f.subject, "attribute": f.attribute, "value": f.value,
                                         "event_date": f.event_date.isoformat() if f.event_date else None}
                                        for f in extra]})
    return {
        "cases": len(rows),
        "expected": expected_total,
        "found": found,
        "produced": produced,
        "spurious": spurious,
        "recall": round(found / expected_total, 4) if expected_total else 1.0,
        "precision": round((produced - spurious) / produced, 4) if produced else 1.0,
        "spurious_rate": round(spurious / produced, 4) if produced else 0.0,
        "corrections_recall": round(corrections_found / corrections_expected, 4) if corrections_expected else 1.0,
        "misses": misses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--verbose", action="store_true", help="list every missed or spurious fact")
    args = parser.parse_args()
    report = evaluate(load(args.dataset))
    if not args.verbose:
        report.pop("misses")
    print(json.dumps(report, ensure_ascii=False, indent=2 if args.verbose else None))


if __name__ == "__main__":
    main()

"""Per-question metrics of the local gate on a labelled gate JSONL file.

Usage: python evals/gate_report.py [evals/gate.jsonl] [--errors]
"""
from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory_core.backends.local_gate import LocalGate, load_rows  # noqa: E402

POLICY_FLAGS = {"insult": "insult", "special": "special", "bank_account": "bank_account"}


def binary(pairs: list[tuple[bool, bool]]) -> dict[str, float]:
    """Precision, recall and accuracy of (predicted, expected) pairs."""
    tp = sum(p and e for p, e in pairs)
    fp = sum(p and not e for p, e in pairs)
    fn = sum(e and not p for p, e in pairs)
    return {
        "precision": round(tp / (tp + fp), 3) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 3) if tp + fn else 1.0,
        "accuracy": round(sum(p == e for p, e in pairs) / len(pairs), 3),
        "support": sum(e for _, e in pairs),
    }


def outcome(decision, row) -> str:
    """What the pipeline would do, from the gate alone (secrets are the denylist's job, not the gate's)."""
    if decision.insult >= 0.5 or decision.special >= 0.5:
        return "refuse"
    if not decision.passes:
        return "ignore"
    return "propose" if decision.bank_account >= 0.5 else "learn"


def report(rows: list[dict], gate: LocalGate, show_errors: bool = False) -> dict:
    started = time.perf_counter()
    decisions = [gate.decide(r["text"], r.get("previous_assistant"))[0] for r in rows]
    elapsed = time.perf_counter() - started
    metrics = {"rows": len(rows), "ms_per_message": round(1000 * elapsed / len(rows), 2)}
    metrics["remember"] = binary([(d.passes, r["remember"]) for d, r in zip(decisions, rows)])
    durable = [(d, r) for d, r in zip(decisions, rows) if r["remember"]]
    metrics["category_accuracy"] = round(sum(d.top_category == r["category"] for d, r in durable) / len(durable), 3)
    metrics["scope_accuracy"] = round(sum(d.top_scope == r["scope"] for d, r in durable) / len(durable), 3)
    metrics["corrects"] = binary([(d.corrects >= 0.5, r["corrects"]) for d, r in zip(decisions, rows)])
    for flag, policy in POLICY_FLAGS.items():
        metrics[flag] = binary([(getattr(d, flag) >= 0.5, r["policy"] == policy) for d, r in zip(decisions, rows)])
    gated = [(outcome(d, r), r["expect"]) for d, r in zip(decisions, rows) if r["policy"] != "secret"]
    metrics["expect_accuracy_without_secrets"] = round(sum(p == e for p, e in gated) / len(gated), 3)
    metrics["expect_confusion"] = {f"{e}->{p}": n for (p, e), n in sorted(Counter(gated).items())}
    secrets = [(d, r) for d, r in zip(decisions, rows) if r["policy"] == "secret"]
    metrics["secret_rows_passed_to_policy"] = f"{sum(d.passes for d, _ in secrets)}/{len(secrets)}"
    if show_errors:
        for d, r in zip(decisions, rows):
            wrong = d.passes != r["remember"] or (r["policy"] != "secret" and outcome(d, r) != r["expect"])
            if wrong:
                print(f"{r['id']} remember={r['remember']} p={d.remember:.2f} cat={d.top_category} "
                      f"ins={d.insult:.2f} spe={d.special:.2f} bank={d.bank_account:.2f} "
                      f"expect={r['expect']} :: {r['text']}")
    return metrics


def main(argv: list[str]) -> None:
    args = [a for a in argv if not a.startswith("--")]
    path = Path(args[0]) if args else Path(__file__).with_name("gate.jsonl")
    with tempfile.TemporaryDirectory() as cache:
        gate = LocalGate(cache_dir=cache)
        started = time.perf_counter()
        gate.models()
        train_seconds = round(time.perf_counter() - started, 2)
        metrics = report(load_rows(path), gate, show_errors="--errors" in argv)
    metrics["train_seconds"] = train_seconds
    for key, value in metrics.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""`memoria eval search`: a dataset goes into a scratch org, through the real search, and out again."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from app import cli
from memory_core.domain.models import Contact, Document, Memory, Message, Organization, User

SHIPPED = Path(__file__).resolve().parent.parent / "evals" / "search.json"

SMALL = {
    "now": "2026-11-29T12:00:00Z",
    "corpus": [
        {"id": "c1", "kind": "contact", "text": "Talleres García S.L.", "tax_id": "B12345678"},
        {"id": "m1", "kind": "memory", "text": "Talleres García paga a 60 días", "subject": "c1",
         "attribute": "plazo_pago", "value": "60 días"},
        {"id": "m2", "kind": "memory", "text": "La oficina abre de 8 a 15"},
        {"id": "msg1", "kind": "message", "text": "Mañana viene el técnico de la caldera"},
        {"id": "i1", "kind": "invoice", "ref": "F-2024-0012", "title": "Factura F-2024-0012",
         "text": "Cambio de pastillas de freno", "contact": "c1", "tax_id": "B12345678"},
    ],
    "queries": [
        {"q": "B-12345678", "expected": ["c1"]},
        {"q": "¿cuándo paga García?", "expected": ["m1"]},
        {"q": "horario de la oficina", "expected": ["m2"]},
        {"q": "F20240012", "expected": ["i1"]},
        {"q": "técnico de la caldera", "expected": ["msg1"]},
    ],
}


def _counts(session) -> dict[str, int]:
    return {m.__tablename__: session.scalar(select(func.count()).select_from(m))
            for m in (Organization, User, Contact, Memory, Message, Document)}


def test_eval_search_prints_metrics_and_removes_its_scratch_data(database, system_session, factory, tmp_path):
    factory.org("Existing")
    before = _counts(system_session)
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL), encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", "search", "--dataset", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["n"] == 5
    assert report["hit_at_5"] == 1.0 and report["mrr"] >= 0.8
    assert {"fts_only", "vector_only", "latency_ms_p95"} <= report.keys()
    system_session.expire_all()
    assert _counts(system_session) == before


def test_eval_search_refuses_a_dataset_that_expects_unknown_ids(database, system_session, tmp_path):
    bad = dict(SMALL, queries=[{"q": "x", "expected": ["nope"]}])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", "search", "--dataset", str(path), "--json"])
    assert result.exit_code != 0
    assert "queries[0] expects ids not in the corpus: ['nope']" in result.output
    assert system_session.scalar(select(func.count()).select_from(Organization)) == 0


def test_shipped_dataset_has_sixty_varied_queries_in_both_languages():
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    tags = {q["tag"] for q in data["queries"]}
    assert len(data["queries"]) >= 60
    assert {"misspelling", "synonym", "tax_id", "reference", "partial_name", "english"} <= tags
    ids = {c["id"] for c in data["corpus"]}
    assert all(set(q["expected"]) <= ids for q in data["queries"])


@pytest.mark.slow
def test_shipped_dataset_meets_the_search_targets(database):
    result = CliRunner().invoke(cli, ["eval", "search", "--dataset", str(SHIPPED), "--json", "--no-baselines"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["hit_at_5"] >= 0.97 and report["mrr"] >= 0.93, report["not_first"]

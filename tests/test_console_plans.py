"""How the console's heavier reads are planned at scale (issue 17): a word search for its words, the filter lists
and the review counters with the plan PostgreSQL keeps once a statement is prepared, which must still read the
indexes meant for them. Each page still shows what it showed."""
from __future__ import annotations

from memory_core.domain.models import AuditLog
from tests.conftest import sign_in
from tests.support.statements import generic_plan_of, sent_statements
from tests.test_console_pages import w  # noqa: F401  (a fixture)


def _engine(app):
    return app.extensions["memoria.db"].engine


def _after(sent: list[tuple], marker: str) -> tuple[list[str], str, dict]:
    """The statements sent before the first one holding `marker` (each with its parameters' values, where a
    setting's value is), that statement and its parameters."""
    at = next(i for i, (statement, _) in enumerate(sent) if marker in statement)
    return ([f"{statement} {sorted(map(str, (p or {}).values())) if isinstance(p, dict) else p}"
             for statement, p in sent[:at]], sent[at][0], sent[at][1])


def test_a_word_search_of_the_memory_list_is_planned_for_its_words(app, client, w):  # noqa: F811
    sign_in(client, w.admin)
    with sent_statements(_engine(app)) as sent:
        html = client.get("/memories?q=oficina").get_data(as_text=True)
    assert "La oficina abre de 8 a 15." in html and "Talleres García paga a 60 días." not in html
    before, _, _ = _after(sent, "websearch_to_tsquery")
    assert any("force_custom_plan" in statement for statement in before)
    # The list as it opens keeps PostgreSQL's own choice.
    with sent_statements(_engine(app)) as sent:
        client.get("/memories")
    assert not any("force_custom_plan" in f"{statement} {params}" for statement, params in sent)


def test_the_audit_filter_lists_keep_a_generic_plan_that_probes_the_orgs_index(app, client, w, database):  # noqa: F811
    for action in ("memory.edit", "proposal.approve", "memory.restore"):
        w.s.add(AuditLog(actor_user_id=w.admin.id, actor_label="console admin", action=action, org_id=w.org.id,
                         target_type="memory", target_id="x", details={}))
    w.s.add(AuditLog(actor_user_id=w.outsider.id, actor_label="console owner", action="memory.secret",
                     org_id=w.other.id, target_type="memory", target_id="y", details={}))
    w.s.commit()
    sign_in(client, w.admin)
    with sent_statements(_engine(app)) as sent:
        html = client.get("/audit").get_data(as_text=True)
    for action in ("memory.edit", "proposal.approve", "memory.restore"):
        assert f'value="{action}"' in html, action
    assert "memory.secret" not in html  # another org's action is in no list
    before, statement, _ = _after(sent, "distinct_values_0")
    assert "force_generic_plan" in before[-1]
    from memory_core.adapters.db import org_scope

    with database.unit_of_work(org_scope(w.org.id, w.admin.id)) as uow:
        plan = generic_plan_of(uow.session.connection(), statement)
    assert "ix_audit_org_action" in plan and "ix_audit_org_actor" in plan, plan


def test_the_review_counters_generic_plan_still_reads_the_pending_proposals_index(app, client, w, factory,  # noqa: F811
                                                                                   database):
    for i, kind in enumerate(("confirmation", "low_permission", "bank_account")):
        factory.memory(w.org, attribute=f"p{i}", value=f"v{i}", sentence=f"Propuesta {i}.", status="proposed",
                       proposal_kind=kind, proposal_rule="test", author_user_id=w.member.id, area="general")
    sign_in(client, w.admin)
    with sent_statements(_engine(app)) as sent:
        html = client.get("/review/").get_data(as_text=True)
    assert all(f"Propuesta {i}." in html for i in range(3))
    before, statement, _ = _after(sent, "kinds")
    assert "force_generic_plan" in before[-1]
    assert "'proposed'" in statement  # a literal: the partial indexes' predicate is proved in any plan
    from memory_core.adapters.db import org_scope

    with database.unit_of_work(org_scope(w.org.id, w.admin.id)) as uow:
        plan = generic_plan_of(uow.session.connection(), statement)
    assert "ix_memories_proposed" in plan, plan

"""How the console's heavier reads are planned at scale (issue 17): a word search for its words, the filter lists
and the review counters with the plan PostgreSQL keeps once a statement is prepared, which must still read the
indexes meant for them. Each page still shows what it showed."""
from __future__ import annotations

import re

from sqlalchemy import event, text

from memory_core.domain.models import AuditLog
from tests.conftest import sign_in
from tests.support.statements import generic_plan_of, sent_statements, settings_seen
from tests.test_console_pages import w  # noqa: F401  (a fixture)


def _engine(app):
    return app.extensions["memoria.db"].engine


def _first_holding(sent: list[tuple], marker: str) -> tuple[str, dict]:
    """The first statement sent holding `marker`, and its parameters."""
    return next((statement, p) for statement, p in sent if marker in statement)


def _plans(seen: list[tuple[str, dict]], marker: str = "") -> set[str]:
    """The plan_cache_mode PostgreSQL ran the statements holding `marker` with."""
    return {values["plan_cache_mode"] for statement, values in seen if marker in statement}


def _kept_plans(app, client, url: str, runs: int = 8) -> list[tuple[str, int, int]]:
    """Open `url` `runs` times (psycopg prepares a statement at its 6th run on a connection), then what the app's
    connections keep prepared: (statement, generic plans, custom plans) of each."""
    connections = set()

    def remember(conn, *args):
        connections.add(conn.connection.driver_connection)

    event.listen(_engine(app), "before_cursor_execute", remember)
    try:
        for _ in range(runs):
            assert client.get(url).status_code == 200
    finally:
        event.remove(_engine(app), "before_cursor_execute", remember)
    kept = []
    for raw in connections:
        kept += raw.execute("select statement, generic_plans, custom_plans from pg_prepared_statements").fetchall()
        raw.commit()
    return kept


def _of(kept: list[tuple[str, int, int]], *words: str) -> list[tuple[str, int, int]]:
    found = [k for k in kept if all(word in k[0] for word in words)]
    assert found, (words, [k[0][:120] for k in kept])
    return found


def test_a_console_page_reads_on_kept_generic_plans_from_the_user_loader_on(app, client, w):  # noqa: F811
    """Row security makes planning a console read cost more than running it: a page's reads keep one plan per
    connection, set with the scope (no round trip of its own), from the user loader's read of the signed-in
    person to the page's list and its capped total."""
    sign_in(client, w.admin)
    with settings_seen(_engine(app), ("plan_cache_mode",)) as seen:
        html = client.get("/memories").get_data(as_text=True)
    assert "Talleres García paga a 60 días." in html
    assert seen and _plans(seen) == {"force_generic_plan"}  # from the page's first statement, with no window
    kept = _kept_plans(app, client, "/memories")
    loader = _of(kept, "FROM users", "memberships")
    listed = _of(kept, "FROM memories", "ORDER BY memories.created_at DESC")
    for statement, generic, custom in loader + listed:
        assert generic >= 2 and custom == 0, statement[:200]


def test_my_memory_keeps_generic_plans_that_still_read_the_own_memories_index(app, client, w, database):  # noqa: F811
    """My memory's lists by level keep their generic plan, which still reads the partial index of active own
    memories in the list's order: "active" is written into the statement, not bound."""
    sign_in(client, w.member)
    with sent_statements(_engine(app), lambda statement: "ORDER BY memories.created_at DESC" in statement) as sent:
        html = client.get("/my-memory").get_data(as_text=True)
    assert "Marta: llamar a Acme." in html
    own = [statement for statement, _ in sent if "memories.owner_user_id = " in statement]
    assert own and all("memories.status = 'active'" in statement for statement in own), own
    from memory_core.adapters.db import org_scope

    with database.unit_of_work(org_scope(w.org.id, w.member.id)) as uow:
        plan = generic_plan_of(uow.session.connection(), own[0])
    assert "ix_memories_own_created" in plan, plan
    kept = _kept_plans(app, client, "/my-memory")
    for statement, generic, custom in _of(kept, "FROM memories", "ORDER BY memories.created_at DESC"):
        assert generic >= 2 and custom == 0, statement[:200]


def test_a_word_search_keeps_planning_for_its_words_on_the_consoles_kept_plans(app, client, w):  # noqa: F811
    """A read matching words (the memory list's and the contacts list's search) plans for its words at every run,
    in a page whose other reads keep their generic plan: one plan for any words read every row holding a common
    one."""
    sign_in(client, w.admin)
    kept = _kept_plans(app, client, "/memories?q=oficina")
    for statement, generic, custom in _of(kept, "FROM memories", "websearch_to_tsquery"):
        assert generic == 0 and custom >= 2, statement[:200]
    with settings_seen(_engine(app), ("plan_cache_mode",)) as seen:
        html = client.get("/contacts?q=Talleres").get_data(as_text=True)
    assert "Talleres García S.L." in html and "Secret Supplier" not in html
    assert _plans(seen, "websearch_to_tsquery") == {"force_custom_plan"}
    kept = _kept_plans(app, client, "/contacts?q=Talleres")
    for statement, generic, custom in _of(kept, "FROM contacts", "websearch_to_tsquery"):
        assert generic == 0 and custom >= 2, statement[:200]
    for url in ("/review/?q=factura", "/review/?state=decided&q=factura", f"/traces?org={w.org.id}&q=factura"):
        with settings_seen(_engine(app), ("plan_cache_mode",)) as seen:
            assert client.get(url).status_code == 200
        assert _plans(seen, "websearch_to_tsquery") == {"force_custom_plan"}, url


def test_a_word_search_of_the_memory_list_is_planned_for_its_words(app, client, w):  # noqa: F811
    sign_in(client, w.admin)
    with settings_seen(_engine(app), ("plan_cache_mode",)) as seen:
        html = client.get("/memories?q=oficina").get_data(as_text=True)
    assert "La oficina abre de 8 a 15." in html and "Talleres García paga a 60 días." not in html
    assert _plans(seen, "websearch_to_tsquery") == {"force_custom_plan"}
    # The list as it opens plans nothing for its values.
    with settings_seen(_engine(app), ("plan_cache_mode",)) as seen:
        client.get("/memories")
    assert seen and "force_custom_plan" not in _plans(seen)


def test_a_word_searchs_capped_count_reads_in_the_pages_order(app, client, w):  # noqa: F811
    """Planned for its word, the count may then walk the org's rows in the page's order and stop at the cap (a
    common word), where counting from the word's index built a bitmap of every row holding it (90 ms at 1M)."""
    sign_in(client, w.admin)
    with sent_statements(_engine(app)) as sent:
        html = client.get("/memories?q=oficina").get_data(as_text=True)
    assert "La oficina abre de 8 a 15." in html
    statement, _ = _first_holding(sent, "websearch_to_tsquery")
    count = re.search(r"SELECT count\(\*\).*?LIMIT", statement, re.DOTALL).group(0)
    assert re.search(r"ORDER BY memories\.created_at, memories\.id\s+LIMIT$", count), count


def test_the_audit_filter_lists_keep_a_generic_plan_that_probes_the_orgs_index(app, client, w, database,  # noqa: F811
                                                                              owner_engine):
    for action in ("memory.edit", "proposal.approve", "memory.restore"):
        w.s.add(AuditLog(actor_user_id=w.admin.id, actor_label="console admin", action=action, org_id=w.org.id,
                         target_type="memory", target_id="x", details={}))
    w.s.add(AuditLog(actor_user_id=w.outsider.id, actor_label="console owner", action="memory.secret",
                     org_id=w.other.id, target_type="memory", target_id="y", details={}))
    w.s.commit()
    # The plan is chosen from the table's statistics: those of this test's rows, not whatever autovacuum last
    # saw of an earlier test's (once they made the actors' list probe the index of every org's actors).
    with owner_engine.begin() as c:  # only the table's owner may analyze it
        c.execute(text("analyze audit_log"))
    sign_in(client, w.admin)
    with sent_statements(_engine(app)) as sent, settings_seen(_engine(app), ("plan_cache_mode",)) as seen:
        html = client.get("/audit").get_data(as_text=True)
    for action in ("memory.edit", "proposal.approve", "memory.restore"):
        assert f'value="{action}"' in html, action
    assert "memory.secret" not in html  # another org's action is in no list
    statement, _ = _first_holding(sent, "distinct_values_0")
    assert _plans(seen) == {"force_generic_plan"}  # the page's transaction keeps generic plans from its first statement
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
    with sent_statements(_engine(app)) as sent, settings_seen(_engine(app), ("plan_cache_mode",)) as seen:
        html = client.get("/review/").get_data(as_text=True)
    assert all(f"Propuesta {i}." in html for i in range(3))
    statement, _ = _first_holding(sent, "kinds")
    assert _plans(seen) == {"force_generic_plan"}  # the page's transaction keeps generic plans from its first statement
    assert "'proposed'" in statement  # a literal: the partial indexes' predicate is proved in any plan
    from memory_core.adapters.db import org_scope

    with database.unit_of_work(org_scope(w.org.id, w.admin.id)) as uow:
        plan = generic_plan_of(uow.session.connection(), statement)
    assert "ix_memories_proposed" in plan, plan

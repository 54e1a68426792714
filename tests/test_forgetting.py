"""The forgetting rules: conversation deleted, member leaves, contact deleted, temporary conversations."""
from __future__ import annotations

import pytest
from sqlalchemy import select, text

from memory_core.domain.access import load_access
from memory_core.domain.errors import Conflict
from memory_core.domain.models import Membership, Memory, MemorySource, Message, PhoneAuthorization
from memory_core.learning.ingest import ingest_message
from memory_core.privacy import forgetting
from memory_core.tenancy import leaving


def _source(s, memory, message):
    s.add(MemorySource(memory_id=memory.id, message_id=message.id, conversation_id=message.conversation_id))
    s.commit()


def _values(s) -> set[str]:
    s.expire_all()
    return set(s.scalars(select(Memory.value)))


def test_deleting_a_conversation_forgets_what_came_only_from_it(factory, system_session):
    s = system_session
    org = factory.org()
    ana = factory.member(org)
    conv, other = factory.conversation(org, ana), factory.conversation(org, ana)
    m1, m2 = factory.message(conv, "uno"), factory.message(other, "dos")
    only_here = factory.memory(None, level="personal", owner=ana, category="person", attribute="a", value="only_here")
    old_version = factory.memory(None, level="personal", owner=ana, category="person", attribute="a",
                                 value="old_version", status="superseded")
    private_here = factory.memory(org, level="private", owner=ana, attribute="b", value="private_here")
    edited = factory.memory(None, level="personal", owner=ana, category="person", attribute="c", value="edited",
                            hand_edited=True)
    both = factory.memory(None, level="personal", owner=ana, category="person", attribute="d", value="both")
    shared = factory.memory(org, level="shared", attribute="e", value="shared")
    untouched = factory.memory(None, level="personal", owner=ana, category="person", attribute="f", value="untouched")
    for m in (only_here, old_version, private_here, edited, both, shared):
        _source(s, m, m1)
    _source(s, both, m2)
    _source(s, untouched, m2)

    counts = forgetting.delete_conversation(s, conv.id, actor_label="test", actor_user_id=ana.id)
    s.commit()
    assert _values(s) == {"edited", "both", "shared", "untouched"}
    assert counts["memories_removed"] == 3
    assert s.scalar(select(Message.text)) == "dos"
    # the shared and edited memories lost this conversation as a source and stay
    assert s.scalars(select(MemorySource.memory_id).where(MemorySource.memory_id == shared.id)).all() == []
    assert set(s.scalars(select(MemorySource.memory_id))) == {both.id, untouched.id}


def test_a_member_who_leaves_loses_private_memories_and_shared_ones_stay_as_former_member(factory, system_session):
    s = system_session
    org, other = factory.org(), factory.org()
    factory.member(org, role="owner")
    ana = factory.member(org, phone="+34611000111")
    factory.member(other, user=ana)
    factory.phone(org, "+34611000111", user=ana)
    factory.memory(org, level="private", owner=ana, attribute="p", value="private_here")
    factory.memory(org, level="private", owner=ana, attribute="p", value="private_old", status="superseded")
    factory.memory(other, level="private", owner=ana, attribute="p", value="private_other_org")
    factory.memory(None, level="personal", owner=ana, category="person", attribute="n", value="personal")
    shared = factory.memory(org, level="shared", attribute="s", value="shared_by_ana", author_user_id=ana.id)

    counts = leaving.member_leaves(s, org.id, ana.id, actor_label="test")
    s.commit()
    assert counts == {"private_removed": 2, "shared_kept": 1, "numbers_revoked": 1}
    assert _values(s) == {"private_other_org", "personal", "shared_by_ana"}
    assert s.get(Memory, shared.id).author_former_member is True
    assert s.scalar(select(PhoneAuthorization.revoked_at)) is not None
    assert s.scalar(select(Membership.left_at).where(Membership.org_id == org.id, Membership.user_id == ana.id))
    assert load_access(s, org.id, user_id=ana.id) is None
    assert load_access(s, org.id, phone="+34611000111") is None
    with pytest.raises(Conflict):
        leaving.member_leaves(s, org.id, ana.id, actor_label="test")


def test_the_last_owner_cannot_leave(factory, system_session):
    org = factory.org()
    boss = factory.member(org, role="owner")
    with pytest.raises(Conflict):
        leaving.member_leaves(system_session, org.id, boss.id, actor_label="test")


def test_deleting_a_contact_deletes_its_facts(factory, system_session):
    s = system_session
    org, other = factory.org(), factory.org()
    acme = factory.contact(org, name="Acme S.L.")
    kept = factory.contact(org, name="Otra S.A.", tax_id="B99999999")
    subject = f"contact:{acme.id}"
    factory.memory(org, subject=subject, category="customer", area="contacts", attribute="plazo", value="acme_60")
    factory.memory(org, subject=subject, category="customer", area="contacts", attribute="plazo", value="acme_30",
                   status="superseded")
    factory.memory(org, subject=subject, category="customer", area="contacts", attribute="iban", value="acme_prop",
                   status="proposed", proposal_kind="bank_account")
    factory.memory(org, subject=f"contact:{kept.id}", category="customer", area="contacts", attribute="plazo",
                   value="otra_90")
    factory.memory(other, subject=subject, category="customer", area="contacts", attribute="x", value="other_org")
    counts = forgetting.delete_contact(s, acme.id, actor_label="test")
    s.commit()
    assert counts == {"facts_removed": 3}
    assert _values(s) == {"otra_90", "other_org"}
    assert s.execute(text("select count(*) from contacts")).scalar_one() == 1


def _row_counts(s) -> dict[str, int]:
    tables = s.execute(text("select tablename from pg_tables where schemaname = 'public' "
                            "and tablename not in ('alembic_version', 'audit_log', 'policy_exclusions')")).scalars()
    return {t: s.execute(text(f'select count(*) from "{t}"')).scalar_one() for t in tables}


def test_a_temporary_conversation_leaves_nothing_behind(factory, system_session):
    s = system_session
    org = factory.org()
    ana = factory.member(org)
    before = _row_counts(s)
    for i, said in enumerate(["Recuerda que mi color favorito es el verde", "Acme paga a 60 días"]):
        result = ingest_message(s, channel="web", conversation="temp-1", external_id=f"t-{i}", org_id=org.id,
                                user_id=ana.id, phone=None, role="user", text=said, temporary=True)
        assert result.temporary and result.message_id is None
    s.commit()
    assert _row_counts(s) == before
    assert forgetting.end_temporary_conversation(s, "web", "temp-1") == 0


def test_ending_a_temporary_conversation_removes_what_reading_left(factory, system_session):
    s = system_session
    org = factory.org()
    ana = factory.member(org)
    conv = factory.conversation(org, ana, temporary=True)
    s.execute(text("insert into memory_traces (org_id, conversation_id, user_id, block_text) "
                   "values (:o, :c, :u, 'block')"), {"o": org.id, "c": conv.id, "u": ana.id})
    s.commit()
    assert forgetting.end_temporary_conversation(s, conv.channel, conv.external_id) == 2
    s.commit()
    assert s.execute(text("select count(*) from memory_traces")).scalar_one() == 0
    assert s.execute(text("select count(*) from conversations")).scalar_one() == 0

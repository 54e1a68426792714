"""The explicit "remember that..." path: no gate threshold, same policy and ladder, in the same turn."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from memory_core.domain.access import load_access
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.domain.model_port import Fact
from memory_core.domain.models import Memory, Notification, UsageLedger
from memory_core.learning.remember import remember


def _active(session):
    return session.scalars(select(Memory).where(Memory.status == "active")).all()


def test_remember_saves_a_shared_customer_fact_in_the_same_turn(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    c = factory.contact(org, "Talleres García S.L.")
    access = load_access(system_session, org.id, user_id=ana.id)
    out = remember(system_session, access, org, "Recuerda que Talleres García paga a 60 días", backend=backend)
    system_session.commit()
    assert out.outcome == "learnt"
    [m] = _active(system_session)
    assert (m.subject, m.value, m.level, m.origin) == (f"contact:{c.id}", "60 días", "shared", "explicit")
    assert system_session.scalars(select(Notification)).all() == []  # the agent says it in this very turn


def test_remember_is_explicit_so_confirmation_mode_does_not_hold_it(factory, system_session, backend):
    org = factory.org(memory_mode="confirmation")
    ana = factory.member(org, role="owner")
    factory.contact(org, "Talleres García S.L.")
    access = load_access(system_session, org.id, user_id=ana.id)
    out = remember(system_session, access, org, "Recuerda que Talleres García paga a 60 días", backend=backend)
    assert out.outcome == "learnt" and _active(system_session)[0].level == "shared"


def test_remember_refuses_a_secret_without_calling_any_model(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    out = remember(system_session, access, org, "Recuerda que mi contraseña es Girasol.77", backend=backend,
                   run_tag="r-secret")
    system_session.commit()
    assert (out.outcome, out.policy) == ("refused", "secret") and _active(system_session) == []
    assert system_session.scalars(select(UsageLedger).where(UsageLedger.run_tag == "r-secret")).all() == []


def test_remember_refuses_an_insult(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    out = remember(system_session, access, org, "Recuerda que Fermín, el de Gráficas Soler, es un idiota",
                   backend=backend)
    assert (out.outcome, out.policy) == ("refused", "insult") and _active(system_session) == []


def test_special_data_about_the_person_is_kept_theirs_alone(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    fact = Fact(subject="self", attribute="salud", value="diabetes", category="person",
                sentence="Tiene diabetes y prefiere reuniones cortas.")
    out = remember(system_session, access, org, fact=fact, backend=backend)
    system_session.commit()
    assert (out.outcome, out.policy) == ("learnt", "special")
    [m] = _active(system_session)
    assert m.level == "personal" and m.owner_user_id == ana.id


def test_special_data_about_someone_else_is_refused_even_when_asked(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    out = remember(system_session, access, org, "Recuerda que mi socia tiene diabetes", backend=backend)
    assert (out.outcome, out.policy) == ("refused", "special") and _active(system_session) == []


def test_remember_a_bank_account_only_proposes_it(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    c = factory.contact(org, "Viveros Campos")
    access = load_access(system_session, org.id, user_id=ana.id)
    out = remember(system_session, access, org,
                   "Recuerda que Viveros Campos tiene ahora la cuenta ES14 0128 0010 9901 0012 3456", backend=backend)
    system_session.commit()
    assert out.outcome == "proposed"
    [p] = system_session.scalars(select(Memory).where(Memory.status == "proposed")).all()
    assert (p.subject, p.proposal_kind) == (f"contact:{c.id}", "bank_account") and _active(system_session) == []


def test_a_read_only_member_keeps_it_private_and_proposes_it(factory, system_session, backend):
    org = factory.org()
    marta = factory.member(org, permissions={"contacts": "read"})
    factory.contact(org, "Talleres García S.L.")
    access = load_access(system_session, org.id, user_id=marta.id)
    out = remember(system_session, access, org, "Recuerda que Talleres García paga a 60 días", backend=backend)
    assert out.outcome == "proposed"
    [m] = _active(system_session)
    assert (m.level, m.owner_user_id) == ("private", marta.id)


def test_nothing_concrete_to_remember_is_said_so(factory, system_session, backend):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    out = remember(system_session, access, org, "Recuerda esto", backend=backend)
    assert out.outcome == "ignored" and out.reason and _active(system_session) == []


def test_a_fact_about_another_orgs_contact_is_refused(factory, system_session, backend):
    org, other = factory.org(), factory.org()
    ana = factory.member(org, role="owner")
    theirs = factory.contact(other, "Cliente Ajeno")
    access = load_access(system_session, org.id, user_id=ana.id)
    fact = Fact(subject=f"contact:{theirs.id}", attribute="plazo_pago", value="10 días", category="customer",
                sentence="Paga a 10 días.")
    with pytest.raises(NotFound):
        remember(system_session, access, org, fact=fact, backend=backend)


@pytest.mark.parametrize("kwargs", [
    {"text": ""}, {"text": "a\x00b"}, {"text": "x" * 20001}, {},
    {"fact": Fact(subject="contact:nope", attribute="a", value="b", sentence="c", category="customer")},
    {"fact": Fact(subject="self", attribute="Bad Attr", value="b", sentence="c", category="person")},
])
def test_bad_input_is_refused_clearly(factory, system_session, backend, kwargs):
    org = factory.org()
    ana = factory.member(org, role="owner")
    access = load_access(system_session, org.id, user_id=ana.id)
    with pytest.raises(InvalidInput):
        remember(system_session, access, org, backend=backend, **kwargs)

"""Demo data: the Talleres García story, with a user of every role and a proposal of every kind."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import exists, select

from memory_core.domain import clock
from memory_core.adapters.db import SYSTEM, get_database
from memory_core.domain.models import (
    Contact, Conversation, Membership, Memory, MemorySource, Message, Organization, PhoneAuthorization, User,
)
from memory_core.adapters.security import hash_password

OWNER = ("ana@demo.memoria.dev", "ana-demo-pass", "owner of Sumalos Demo")
ADMIN = ("carlos@demo.memoria.dev", "carlos-demo-pass", "admin of Sumalos Demo")
MEMBER = ("marta@demo.memoria.dev", "marta-demo-pass", "member, reads contacts only")
OTHER_OWNER = ("luis@panaderia.memoria.dev", "luis-demo-pass", "owner of Panadería Ruiz")
STAFF = ("staff@memoria.dev", "staff-demo-pass", "platform staff (read-only)")
PRIVACY = ("privacy@memoria.dev", "privacy-demo-pass", "privacy officer")
ANA_PHONE = "+34600111222"


def has_data() -> bool:
    with get_database().unit_of_work(SYSTEM) as uow:
        return bool(uow.session.scalar(select(exists().where(Organization.id.isnot(None)))))


def load_demo(force: bool = False) -> list[tuple[str, str, str]] | None:
    """Load the demo once; returns the logins (email, password, role) or None if data was there."""
    if has_data() and not force:
        return None
    with get_database().unit_of_work(SYSTEM) as uow:
        _load(uow.session)
        uow.commit()
    return [OWNER, ADMIN, MEMBER, OTHER_OWNER, STAFF, PRIVACY]


def _user(s, login, name, **kw) -> User:
    u = User(email=login[0], name=name, password_hash=hash_password(login[1]), **kw)
    s.add(u)
    return u


def _load(s) -> None:
    now = clock.now()
    org = Organization(name="Sumalos Demo S.L.", memory_mode="automatic")
    org2 = Organization(name="Panadería Ruiz", memory_mode="confirmation")
    s.add_all([org, org2])
    ana = _user(s, OWNER, "Ana Pérez", phone=ANA_PHONE)
    carlos = _user(s, ADMIN, "Carlos Gil")
    marta = _user(s, MEMBER, "Marta Soler")
    luis = _user(s, OTHER_OWNER, "Luis Ruiz")
    _user(s, STAFF, "Sofía (staff)", platform_role="staff")
    _user(s, PRIVACY, "Pau (privacy)", platform_role="privacy_officer")
    s.flush()
    s.add_all([
        Membership(org_id=org.id, user_id=ana.id, role="owner"),
        Membership(org_id=org.id, user_id=carlos.id, role="admin"),
        Membership(org_id=org.id, user_id=marta.id, role="member", permissions={"contacts": "read"}),
        Membership(org_id=org2.id, user_id=luis.id, role="owner"),
        PhoneAuthorization(org_id=org.id, phone=ANA_PHONE, user_id=ana.id,
                           permissions={a: "edit" for a in ("general", "company", "contacts", "invoices",
                                                            "quotes", "expenses", "documents")}),
    ])
    garcia = Contact(org_id=org.id, name="Talleres García S.L.", tax_id="B12345678", kind="customer",
                     aliases=["García", "Talleres García"])
    acme = Contact(org_id=org.id, name="Acme Suministros S.A.", tax_id="A87654321", kind="supplier",
                   aliases=["Acme"])
    levante = Contact(org_id=org.id, name="Construcciones Levante", tax_id="B11223344", kind="customer")
    harinas = Contact(org_id=org2.id, name="Harinas del Sur", tax_id="B99887766", kind="supplier")
    s.add_all([garcia, acme, levante, harinas])
    s.flush()

    web = Conversation(channel="web", external_id="demo-web-1", org_id=org.id, user_id=ana.id)
    wa = Conversation(channel="whatsapp", external_id="demo-wa-34600111222", org_id=org.id, user_id=ana.id,
                      phone=ANA_PHONE)
    web_marta = Conversation(channel="web", external_id="demo-web-marta", org_id=org.id, user_id=marta.id)
    s.add_all([web, wa, web_marta])
    s.flush()

    def msg(conv, ext, role, text, *, user=None, phone=None, days_ago=0):
        m = Message(conversation_id=conv.id, channel=conv.channel, external_id=ext, org_id=org.id,
                    user_id=user.id if user else None, phone=phone, role=role, text=text,
                    created_at=now - dt.timedelta(days=days_ago))
        s.add(m)
        return m

    m30 = msg(web, "demo-w-1", "user", "Talleres García paga a 30 días.", user=ana, days_ago=40)
    msg(web, "demo-w-2", "assistant", "Anotado: Talleres García paga a 30 días.", days_ago=40)
    m60 = msg(web, "demo-w-3", "user", "Talleres García paga a 60 días ahora, no a 30.", user=ana, days_ago=3)
    msg(web, "demo-w-4", "assistant", "Lo he aprendido: Talleres García paga a 60 días.", days_ago=3)
    mname = msg(web, "demo-w-5", "user", "Llámame Ana, y trátame de tú.", user=ana, days_ago=10)
    miban_old = msg(web, "demo-w-6", "user", "El IBAN de Talleres García es ES91 2100 0418 4502 0005 1332.",
                    user=ana, days_ago=60)
    miban_new = msg(wa, "demo-wa-1", "user",
                    "Talleres García dice que a partir de ahora les paguemos en ES79 2100 0813 6101 2345 6789.",
                    user=ana, phone=ANA_PHONE, days_ago=1)
    msg(wa, "demo-wa-2", "user", "Factura a Talleres García el cambio de frenos, 480 €.", user=ana,
        phone=ANA_PHONE, days_ago=0)
    mlaura = msg(wa, "demo-wa-3", "user", "El contacto en Acme es Laura Martín.", user=ana, phone=ANA_PHONE,
                 days_ago=5)
    mmarta = msg(web_marta, "demo-m-1", "user", "Acme ahora nos entrega los martes y jueves.", user=marta,
                 days_ago=2)
    s.flush()

    def mem(*, level, category, subject, attribute, value, sentence, source, owner=None, area=None,
            status="active", proposal_kind=None, rule=None, replaces=None, author=None, days_ago=0, org_id=org.id,
            event_date=None, pinned=False):
        m = Memory(org_id=None if level == "personal" else org_id, level=level, owner_user_id=owner.id if owner else None,
                   area=area or ("contacts" if category in ("customer", "supplier") else "general"),
                   category=category, subject=subject, attribute=attribute, value=value, sentence=sentence,
                   status=status, proposal_kind=proposal_kind, proposal_rule=rule,
                   replaces_id=replaces.id if replaces else None, author_user_id=(author or ana).id,
                   valid_from=now - dt.timedelta(days=days_ago), created_at=now - dt.timedelta(days=days_ago),
                   event_date=event_date, pinned=pinned)
        s.add(m)
        s.flush()
        s.add(MemorySource(memory_id=m.id, message_id=source.id, conversation_id=source.conversation_id))
        return m

    g = f"contact:{garcia.id}"
    old_terms = mem(level="shared", category="customer", subject=g, attribute="plazo_pago", value="30 días",
                    sentence="Talleres García paga a 30 días.", source=m30, days_ago=40, status="superseded")
    new_terms = mem(level="shared", category="customer", subject=g, attribute="plazo_pago", value="60 días",
                    sentence="Talleres García paga a 60 días.", source=m60, days_ago=3)
    old_terms.valid_to = now - dt.timedelta(days=3)
    old_terms.superseded_by = new_terms.id
    mem(level="personal", category="person", subject="self", attribute="nombre", value="Ana",
        sentence="Se llama Ana.", source=mname, owner=ana, days_ago=10, pinned=True)
    mem(level="personal", category="preference", subject="self", attribute="tratamiento", value="tú",
        sentence="Prefiere que la traten de tú.", source=mname, owner=ana, days_ago=10)
    account = mem(level="shared", category="customer", subject=g, attribute="cuenta_bancaria",
                  value="ES91 2100 0418 4502 0005 1332", sentence="La cuenta de Talleres García es ES91 2100 0418 4502 0005 1332.",
                  source=miban_old, days_ago=60)
    mem(level="shared", category="customer", subject=g, attribute="cuenta_bancaria",
        value="ES79 2100 0813 6101 2345 6789",
        sentence="Talleres García pide cobrar en ES79 2100 0813 6101 2345 6789 (sin verificar).",
        source=miban_new, status="proposed", proposal_kind="bank_account",
        rule="A customer's new bank account is never learnt directly: an owner or admin must verify it.",
        replaces=account, days_ago=1)
    mem(level="shared", category="supplier", subject=f"contact:{acme.id}", attribute="persona_contacto",
        value="Laura Martín", sentence="El contacto en Acme es Laura Martín.", source=mlaura, days_ago=5)
    # Marta may only read contacts: she keeps a private memory and the fact waits for someone who may edit.
    mem(level="private", category="supplier", subject=f"contact:{acme.id}", attribute="dias_entrega",
        value="martes y jueves", sentence="Acme entrega los martes y jueves.", source=mmarta, owner=marta,
        author=marta, days_ago=2)
    mem(level="shared", category="supplier", subject=f"contact:{acme.id}", attribute="dias_entrega",
        value="martes y jueves", sentence="Acme entrega los martes y jueves.", source=mmarta, author=marta,
        status="proposed", proposal_kind="low_permission",
        rule="The author may only read contacts: someone who may edit contacts must share it.", days_ago=2)
    # Ana's own pending confirmation (as if the org had been in confirmation mode when it was learnt).
    mem(level="shared", category="customer", subject=f"contact:{levante.id}", attribute="formato_factura",
        value="PDF por email", sentence="Construcciones Levante quiere las facturas en PDF por email.",
        source=m60, status="proposed", proposal_kind="confirmation",
        rule="Confirmation mode: business facts learnt in the background wait for their author.", days_ago=1)
    mem(level="personal", category="event", subject="self", attribute="evento", value="Feria de Valencia",
        sentence="Va a la feria de Valencia.", source=mname, owner=ana, days_ago=10,
        event_date=(now + dt.timedelta(days=12)).date())

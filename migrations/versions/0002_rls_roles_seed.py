"""Restricted app role, row-level security, append-only audit log, seeded exclusion list.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"

# Per-transaction settings, set by memory_core.adapters.db from the session's Scope. An unset or empty
# setting is NULL, so a comparison with it is never true: no scope, no rows.
S_MODE = "current_setting('memoria.mode', true)"
S_ORG = "nullif(current_setting('memoria.org_id', true), '')::uuid"
S_USER = "nullif(current_setting('memoria.user_id', true), '')::uuid"
S_PHONE = "nullif(current_setting('memoria.phone', true), '')"
S_AREAS = "string_to_array(nullif(current_setting('memoria.read_areas', true), ''), ',')"


def _owned(user_col: str, phone_col: str) -> str:
    return f"({user_col} = {S_USER} or {phone_col} = {S_PHONE})"


MEMORIES = f"""
  {S_MODE} = 'system'
  or ({S_MODE} = 'org' and org_id = {S_ORG}
      and (level = 'shared' or status = 'proposed' or owner_user_id = {S_USER}))
  or ({S_MODE} = 'principal' and (
        (level = 'personal' and {_owned('owner_user_id', 'owner_phone')})
     or (level = 'private' and org_id = {S_ORG} and {_owned('owner_user_id', 'owner_phone')})
     or (level = 'shared' and org_id = {S_ORG} and area = any({S_AREAS}))))
"""

MESSAGES = f"""
  {S_MODE} = 'system'
  or ({S_MODE} = 'org' and org_id = {S_ORG})
  or ({S_MODE} = 'principal' and (
        {_owned('user_id', 'phone')} and (org_id is null or org_id = {S_ORG})
     or (visibility = 'shared_in_org' and org_id = {S_ORG} and area = any({S_AREAS}))))
"""

DOCUMENTS = f"""
  {S_MODE} = 'system'
  or ({S_MODE} = 'org' and org_id = {S_ORG})
  or ({S_MODE} = 'principal' and org_id = {S_ORG} and (
        {_owned('owner_user_id', 'owner_phone')}
     or (visibility = 'shared_in_org' and area = any({S_AREAS}))))
"""

CONTACTS = f"""
  {S_MODE} = 'system'
  or ({S_MODE} = 'org' and org_id = {S_ORG})
  or ({S_MODE} = 'principal' and org_id = {S_ORG} and area = any({S_AREAS}))
"""

POLICIES = {"memories": MEMORIES, "messages": MESSAGES, "documents": DOCUMENTS, "contacts": CONTACTS}

# The exclusion list. secret: refused outright, in every mode. special: GDPR art. 9 data, never
# learnt in the background. Patterns are Python regular expressions, matched case-insensitively.
SEED = [
    ("secret", "password", r"\b(contrase(ñ|n)a|password|passwd|clave de acceso|pin)\b\s*(es|is|:|=)?\s*\S+", None,
     "Passwords and PINs"),
    ("secret", "verification_code", r"\b(c(ó|o)digo( de)? (verificaci(ó|o)n|seguridad|confirmaci(ó|o)n|acceso|autenticaci(ó|o)n|un solo uso|sms)|verification code|security code|otp|2fa code|one[- ]time code)\b\D{0,20}\d{4,8}\b",
     None, "One-time and verification codes"),
    ("secret", "api_key", r"\b(sk-[A-Za-z0-9_\-]{16,}|[sr]k_(live|test)_[A-Za-z0-9]{16,}|(api[_ ]?key|clave (de (la )?)?api|token|secret)\s*(es|is|:|=)\s*[A-Za-z0-9_\-]{12,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}|xox[bpoa]-[A-Za-z0-9-]{10,})",
     None, "API keys, access tokens and cloud credentials"),
    ("secret", "card_number", r"(?<![0-9A-Za-z])(?<!\d[ -])\d(?:[ -]?\d){12,18}(?![ -]?\d)", "luhn", "Payment card numbers that pass the Luhn check"),
    ("secret", "national_id", r"\b(\d{8}[ -]?[A-Za-z]|[XYZxyz][ -]?\d{7}[ -]?[A-Za-z])\b", "dni",
     "Spanish DNI and NIE numbers with a valid control letter"),
    ("secret", "social_security", r"\b(\d{3}-\d{2}-\d{4}|(seguridad social|social security|nss|ssn)\D{0,20}\d[\d /-]{8,14}\d)\b",
     None, "Social security numbers (US SSN, Spanish NSS)"),
    ("secret", "passport", r"\b(pasaporte|passport)\b\D{0,20}\b(?=[A-Za-z]*\d)[A-Za-z0-9]{6,9}\b", None, "Passport numbers"),
    ("special", "health", r"\b(diabet\w*|c(á|a)ncer|depresi(ó|o)n|ansiedad|embaraz\w*|vih|hiv|enfermedad|diagn(ó|o)stic\w*|medicaci(ó|o)n|tratamiento m(é|e)dico|quimio\w*|terapia|psiqui\w*|illness|disease|pregnan\w*|diagnos\w*|medication|depression|anxiety|surgery|operaci(ó|o)n quir(ú|u)rgica|baja m(é|e)dica)\b",
     None, "Health data"),
    ("special", "religion", r"\b(religi(ó|o)n|religios[oa]s?|religious|cat(ó|o)lic\w*|catholic|musulm(á|a)n\w*|muslim|jud(í|i)[oa]s?|juda(í|i)smo|judaism|jewish|evang(é|e)lic\w*|ateo|atheist|mezquita|mosque|sinagoga|synagogue)\b",
     None, "Religious or philosophical beliefs"),
    ("special", "politics", r"\b(vot(o|a|ó|e) (a|al|por)|afiliad\w* (a|al) (partido|sindicato)|partido pol(í|i)tico|political party|votes? for|sindicato|trade union|union member)\b",
     None, "Political opinions and trade-union membership"),
    ("special", "sexual_orientation", r"\b(gay|lesbiana?|lesbian|bisexual|homosexual|heterosexual|transg(é|e)nero|transgender|orientaci(ó|o)n sexual|sexual orientation)\b",
     None, "Sex life or sexual orientation"),
    ("special", "ethnicity", r"\b(origen (é|e)tnico|etnia|raza|ethnic origin|ethnicity|racial)\b", None,
     "Racial or ethnic origin"),
    ("special", "biometric", r"\b(huella dactilar|fingerprint|biom(é|e)tric\w*|reconocimiento facial|facial recognition|adn|dna|gen(é|e)tic\w*)\b",
     None, "Biometric and genetic data"),
]


def upgrade() -> None:
    op.execute(f"""
    do $$ begin
      if not exists (select 1 from pg_roles where rolname = '{APP_ROLE}') then
        create role {APP_ROLE} login nosuperuser nobypassrls nocreatedb nocreaterole;
      end if;
    end $$;
    grant usage on schema public to {APP_ROLE};
    grant select, insert, update, delete on all tables in schema public to {APP_ROLE};
    revoke update, delete, truncate on audit_log from {APP_ROLE};
    grant usage, select on all sequences in schema public to {APP_ROLE};
    """)
    for table, rule in POLICIES.items():
        op.execute(f"""
        alter table {table} enable row level security;
        alter table {table} force row level security;
        create policy {table}_ownership on {table} for all to {APP_ROLE} using ({rule}) with check ({rule});
        """)
    # The audit log is append-only for everyone, the table owner included.
    op.execute("""
    create or replace function audit_log_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_log is append-only';
    end $$;
    create trigger audit_log_no_update before update or delete or truncate on audit_log
      for each statement execute function audit_log_append_only();
    """)
    exclusions = sa.table(
        "policy_exclusions",
        sa.column("kind", sa.String), sa.column("name", sa.String), sa.column("pattern", sa.Text),
        sa.column("validator", sa.String), sa.column("description", sa.Text),
    )
    op.bulk_insert(exclusions, [
        {"kind": k, "name": n, "pattern": p, "validator": v, "description": d} for k, n, p, v, d in SEED
    ])


def downgrade() -> None:
    op.execute("drop trigger if exists audit_log_no_update on audit_log; drop function if exists audit_log_append_only();")
    for table in POLICIES:
        op.execute(f"drop policy if exists {table}_ownership on {table}; alter table {table} disable row level security;")
    op.execute("delete from policy_exclusions where org_id is null")
    op.execute(f"revoke all on all tables in schema public from {APP_ROLE}; "
               f"revoke all on all sequences in schema public from {APP_ROLE}; revoke usage on schema public from {APP_ROLE};")

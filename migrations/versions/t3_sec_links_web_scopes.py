"""the web stops needing system scope for one-time links, adopting a number's history and forgetting

A person opening a link is not signed in, so the web read and used the link in system scope. Now two
SECURITY DEFINER functions, owned by memoria_worker and keyed by the token itself (hashed inside, so
the stored SHA-256 alone opens nothing), do the only two things that need to reach account_tokens:

- `memoria_link_peek(purpose, token, now)`: the valid, unused link's fields its page and its use need
  (its id, email, name, org and org name, role, areas, platform role), the id of the account it
  applies to (a reset's account; the account an invitation's email already has) and, for a setup
  link, whether a platform administrator exists; nothing for a wrong, used or expired token;
- `memoria_link_use(purpose, token, now, user, email)`: marks the link used (once: a concurrent use
  finds it used), records the account it made and gives that account the link's platform role, if
  any (a setup link's, a platform invitation's); returns the link's id, or null.

A third, `memoria_pre_link_orgs(user)`, lists the orgs in which the person's linked number has rows
from before it was linked, so adopting them runs in the person's own scope (with the number) once per
org instead of in system scope.

A fourth, `memoria_forget_owners(org, conversation, subject)`, names who holds the personal and private
memories that deleting one of an org's conversations or contacts reaches (ids and numbers only), so the
API forgets them in each owner's own scope and the rest in the org's.

Two more take a WhatsApp link code (VINCULAR) without system scope: `memoria_link_code_user(hmac, org)`
names the account that asked for it, so the link runs in that person's scope with the number, and
`memoria_link_code_take(...)` counts wrong guesses per number, checks the code and marks it used.

A "ladder" scope (new permissive policies `*_ladder`) lets the API's remember write through the write
ladder as the principal, instead of in system scope: the org's shared facts and proposals, the
principal's own memories, and the audit, usage, contacts, exclusions, org and user rows it needs.

The rest of each use (the new account, its membership, the new password, the audit row) is written
by the domain in the person's own scope (principal, or the invitation's org), which the existing
policies already allow.

Revision ID: t3_sec_links_web_scopes
Revises: t2_merge_language_scopes
Create Date: 2026-12-01
"""
from alembic import op

revision = "t3_sec_links_web_scopes"
down_revision = "t2_merge_language_scopes"
branch_labels = None
depends_on = None

APP_ROLE = "memoria_app"
WORKER_ROLE = "memoria_worker"

# Each runs as the worker in system scope and puts the caller's scope back before returning.
ENTER = "perform set_config('memoria.mode', 'system', true);"
LEAVE = "perform set_config('memoria.mode', coalesce(caller, ''), true);"
HASH = "encode(sha256(convert_to(p_token, 'UTF8')), 'hex')"

FUNCTIONS = {
    "memoria_link_peek(text, text, timestamptz)": ("p_purpose text, p_token text, p_now timestamptz", f"""
    returns table (link_id uuid, email text, name text, org_id uuid, org_name text, role text,
                   permissions jsonb, platform_role text, account_id uuid, admin_exists boolean)
    language plpgsql as $$
    -- The valid, unused link of this purpose and token: what its page shows and its use needs.
    declare caller text := current_setting('memoria.mode', true);
    begin
      {ENTER}
      return query select t.id, t.email::text, t.name::text, t.org_id, o.name::text, t.role::text, t.permissions,
          t.platform_role::text,
          case when t.purpose = 'reset' then t.user_id
               when t.purpose = 'invite' then (select u.id from users u where lower(u.email) = lower(t.email)) end,
          case when t.purpose = 'setup' then exists (select 1 from users u where u.platform_role = 'platform_admin')
          end
        from account_tokens t left join organizations o on o.id = t.org_id
        where t.token_hash = {HASH} and t.purpose = p_purpose and t.used_at is null and t.expires_at > p_now;
      {LEAVE}
    end $$"""),
    "memoria_link_use(text, text, timestamptz, uuid, text)": (
        "p_purpose text, p_token text, p_now timestamptz, p_user uuid, p_email text", f"""
    returns uuid language plpgsql as $$
    -- Use the link once: mark it used, record the account it made (a setup link also its email).
    -- Null when it is not valid by now (a concurrent use waits for the row, then finds it used); a
    -- setup link is also refused once another platform administrator exists.
    declare caller text := current_setting('memoria.mode', true); found uuid; granted text; invited text;
    begin
      {ENTER}
      update account_tokens t set used_at = p_now, user_id = coalesce(p_user, t.user_id),
          email = case when t.purpose = 'setup' then coalesce(p_email, t.email) else t.email end
        where t.token_hash = {HASH} and t.purpose = p_purpose and t.used_at is null and t.expires_at > p_now
          and (t.purpose <> 'setup' or not exists (select 1 from users u
                 where u.platform_role = 'platform_admin' and u.id is distinct from p_user))
        returning t.id, t.platform_role, t.email into found, granted, invited;
      -- A setup link or a platform invitation gives its role here (only system scope may give one),
      -- to the account that used it: the setup's new account, or the invited email's.
      if found is not null and granted is not null and p_user is not null then
        update users u set platform_role = granted
          where u.id = p_user and (p_purpose = 'setup' or lower(u.email) = lower(invited));
      end if;
      {LEAVE}
      return found;
    end $$"""),
    "memoria_pre_link_orgs(uuid)": ("p_user uuid", f"""
    returns table (org_id uuid) language plpgsql as $$
    -- The orgs in which a person's linked number has rows from before it was linked (null: rows of no
    -- org): where adopting them must look. Ids only, for the person's own number.
    declare caller text := current_setting('memoria.mode', true); linked text;
    begin
      {ENTER}
      select u.phone into linked from users u where u.id = p_user;
      return query select distinct x.org_id from (
          select m.org_id from memories m where m.owner_phone = linked and m.owner_user_id is null
            and m.level in ('personal', 'private')
          union select g.org_id from messages g where g.phone = linked and g.user_id is null
          union select c.org_id from conversations c where c.phone = linked and c.user_id is null
          union select n.org_id from notifications n where n.phone = linked and n.user_id is null
          union select t.org_id from memory_traces t where t.phone = linked and t.user_id is null) x
        where linked is not null;
      {LEAVE}
    end $$"""),
    "memoria_forget_owners(uuid, uuid, text)": ("p_org uuid, p_conversation uuid, p_subject text", f"""
    returns table (user_id uuid, phone text) language plpgsql as $$
    -- Who holds personal or private memories that forgetting reaches: sourced from p_conversation (a
    -- conversation of p_org), or about p_subject in p_org. Their ids and numbers only, nothing of the
    -- memories, so the caller forgets them in each owner's own scope. Only for a caller in that org's scope.
    declare caller text := current_setting('memoria.mode', true);
      caller_org text := current_setting('memoria.org_id', true);
    begin
      {ENTER}
      return query select distinct m.owner_user_id, m.owner_phone::text from memories m
        where caller = 'org' and caller_org = p_org::text and m.level in ('personal', 'private') and (
          (p_conversation is not null
           and exists (select 1 from conversations c where c.id = p_conversation and c.org_id = p_org)
           and exists (select 1 from memory_sources s where s.memory_id = m.id and s.conversation_id = p_conversation))
          or (p_subject is not null and m.org_id = p_org and m.subject = p_subject));
      {LEAVE}
    end $$"""),
    "memoria_link_code_user(text, uuid)": ("p_hmac text, p_org uuid", f"""
    returns uuid language plpgsql as $$
    -- The account that asked for a WhatsApp link code (its HMAC, in the org the message came to), so
    -- the link runs in that person's scope. The HMAC needs the code and the server's secret.
    declare caller text := current_setting('memoria.mode', true); found uuid;
    begin
      {ENTER}
      select l.user_id into found from link_codes l
        where l.code_hmac = p_hmac and (p_org is null or l.org_id = p_org);
      {LEAVE}
      return found;
    end $$"""),
    "memoria_link_code_take(text, uuid, text, text, timestamptz, integer, timestamptz)": (
        "p_hmac text, p_org uuid, p_phone text, p_key text, p_since timestamptz, p_max integer, p_now timestamptz",
        f"""
    returns table (outcome text, user_id uuid, org_id uuid, phone_locale text) language plpgsql as $$
    -- Take a WhatsApp link code sent from p_phone: 'too_many' when the number has p_max wrong codes
    -- since p_since, 'missing' without a code (null HMAC), 'invalid', 'used' or 'expired' (a wrong
    -- guess, counted under p_key), else 'ok' with the code's account and org, the code now used. Also
    -- the language of the account the number already belongs to, for the reply.
    declare caller text := current_setting('memoria.mode', true); code link_codes%rowtype; lang text;
      result text;
    begin
      {ENTER}
      select u.locale into lang from users u where u.phone = p_phone;
      if (select count(*) from login_attempts a where a.key = p_key and a.at > p_since) >= p_max then
        result := 'too_many';
      elsif p_hmac is null then
        result := 'missing';
      else
        select * into code from link_codes l where l.code_hmac = p_hmac and (p_org is null or l.org_id = p_org)
          for update;
        result := case when code.id is null then 'invalid' when code.used_at is not null then 'used'
                       when code.expires_at <= p_now then 'expired' else 'ok' end;
        if result = 'ok' then
          update link_codes set used_at = p_now, used_by_phone = p_phone where id = code.id;
        else
          insert into login_attempts (key, at) values (p_key, p_now);
        end if;
      end if;
      {LEAVE}
      return query select result, case when result = 'ok' then code.user_id end,
                          case when result = 'ok' then code.org_id end, lang;
    end $$"""),
}


MODE = "(SELECT current_setting('memoria.mode', true))"
ORG = "(SELECT nullif(current_setting('memoria.org_id', true), '')::uuid)"
USER = "(SELECT nullif(current_setting('memoria.user_id', true), '')::uuid)"
PHONE = "(SELECT nullif(current_setting('memoria.phone', true), ''))"
LADDER = f"{MODE} = 'ladder'"
OWNED = f"(owner_user_id = {USER} or owner_phone = {PHONE})"
# The "ladder" scope: a principal writing through the write ladder in the request (the API's remember),
# as the worker does in system scope: the org's shared facts and proposals in every area (the ladder
# compares with them and files proposals where the writer may not read; the Python access rule decides
# what is written), the principal's own personal and private memories, and what those writes need.
# table -> (command, using, with check or None)
LADDER_POLICIES: dict[str, tuple[str, str, str | None]] = {
    "memories": ("all", f"""{LADDER} and ((org_id = {ORG} and (level = 'shared' or status = 'proposed'))
                 or (level = 'personal' and {OWNED}) or (level = 'private' and org_id = {ORG} and {OWNED}))""", None),
    # The audit rows of the memories it may see (an insert ... returning reads the new row back).
    "audit_log": ("all", f"""{LADDER} and target_type = 'memory' and actor_user_id is not distinct from {USER}
                 and (org_id = {ORG} or org_id is null)
                 and exists (select 1 from memories m where m.id::text = audit_log.target_id)""", None),
    "usage_ledger": ("all", f"{LADDER} and org_id = {ORG}", None),
    "contacts": ("select", f"{LADDER} and org_id = {ORG}", None),
    "policy_exclusions": ("select", f"{LADDER} and (org_id is null or org_id = {ORG})", None),
    "organizations": ("select", f"{LADDER} and id = {ORG}", None),
    "users": ("select", f"{LADDER} and id = {USER}", None),
}


def upgrade() -> None:
    for table, (command, using, check) in LADDER_POLICIES.items():
        checked = f" with check ({check or using})" if command == "all" else ""
        op.execute(f"create policy {table}_ladder on {table} for {command} to {APP_ROLE} using ({using}){checked}")
    for signature, (params, body) in FUNCTIONS.items():
        name = signature.split("(")[0]
        op.execute(f"create or replace function {name}({params}) {body.strip()}")
        op.execute(f"alter function {signature} security definer; "
                   f"alter function {signature} set search_path = public, pg_temp; "
                   f"alter function {signature} owner to {WORKER_ROLE}; "
                   f"revoke all on function {signature} from public; "
                   f"grant execute on function {signature} to {APP_ROLE}")


def downgrade() -> None:
    for table in LADDER_POLICIES:
        op.execute(f"drop policy if exists {table}_ladder on {table}")
    for signature in FUNCTIONS:
        op.execute(f"drop function if exists {signature}")

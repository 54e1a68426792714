"""initial schema

Revision ID: 0001
Revises: 
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa
import pgvector.sqlalchemy
from sqlalchemy.dialects import postgresql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


PREAMBLE = """
create extension if not exists vector;
create extension if not exists pg_trgm;
create extension if not exists unaccent;
do $$ begin
  if not exists (select 1 from pg_ts_config where cfgname = 'spanish_unaccent') then
    create text search configuration public.spanish_unaccent (copy = pg_catalog.spanish);
    alter text search configuration public.spanish_unaccent
      alter mapping for hword, hword_part, word with public.unaccent, pg_catalog.spanish_stem;
  end if;
end $$;
-- array_to_string is only STABLE; a text[] join is immutable in fact, and generated columns need that.
create or replace function public.memoria_words(text[]) returns text
  language sql immutable parallel safe as $f$ select array_to_string($1, ' ') $f$;
"""


def upgrade() -> None:
    # Full-text uses Spanish stemming over unaccented words: a text search configuration,
    # so to_tsvector('public.spanish_unaccent', ...) stays immutable and can be a stored column.
    op.execute(PREAMBLE)
    op.create_table('audit_log',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('actor_user_id', sa.UUID(), nullable=True),
    sa.Column('actor_label', sa.String(length=200), nullable=False),
    sa.Column('action', sa.String(length=80), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=True),
    sa.Column('target_type', sa.String(length=40), nullable=True),
    sa.Column('target_id', sa.String(length=80), nullable=True),
    sa.Column('details', postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_audit_action', 'audit_log', ['action'], unique=False)
    op.create_index('ix_audit_at', 'audit_log', ['at'], unique=False)
    op.create_index('ix_audit_org_at', 'audit_log', ['org_id', 'at'], unique=False)
    op.create_table('job_runs',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('job', sa.String(length=80), nullable=False),
    sa.Column('status', sa.String(length=12), server_default='running', nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('counts', postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('triggered_by', sa.String(length=200), server_default='schedule', nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_job_runs_job_started', 'job_runs', ['job', 'started_at'], unique=False)
    op.create_table('login_attempts',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('key', sa.String(length=400), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_login_attempts_key_at', 'login_attempts', ['key', 'at'], unique=False)
    op.create_table('organizations',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('memory_mode', sa.String(length=20), server_default='automatic', nullable=False),
    sa.Column('settings', postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint("memory_mode in ('automatic','confirmation')", name='memory_mode_valid'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('users',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('password_hash', sa.String(length=300), nullable=True),
    sa.Column('platform_role', sa.String(length=30), nullable=True),
    sa.Column('phone', sa.String(length=32), nullable=True),
    sa.Column('locale', sa.String(length=10), server_default='es', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint("platform_role is null or platform_role in ('staff','privacy_officer')", name='platform_role_valid'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('email'),
    sa.UniqueConstraint('phone')
    )
    op.create_table('api_keys',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('prefix', sa.String(length=16), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('created_by', sa.UUID(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['created_by'], ['users.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('key_hash')
    )
    op.create_table('contacts',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=False),
    sa.Column('name', sa.String(length=300), nullable=False),
    sa.Column('tax_id', sa.String(length=40), nullable=True),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('aliases', postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('area', sa.String(length=30), server_default='contacts', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('search_tsv', postgresql.TSVECTOR(), sa.Computed("to_tsvector('public.spanish_unaccent', coalesce(name || ' ' || coalesce(tax_id, '') || ' ' || public.memoria_words(aliases), ''))", persisted=True), nullable=False),
    sa.CheckConstraint("kind in ('customer','supplier')", name='contact_kind_valid'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_contacts_name_trgm', 'contacts', ['name'], unique=False, postgresql_using='gin', postgresql_ops={'name': 'gin_trgm_ops'})
    op.create_index('ix_contacts_org_tax', 'contacts', ['org_id', 'tax_id'], unique=False)
    op.create_index('ix_contacts_tsv', 'contacts', ['search_tsv'], unique=False, postgresql_using='gin')
    op.create_table('conversations',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('channel', sa.String(length=30), nullable=False),
    sa.Column('external_id', sa.String(length=200), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=True),
    sa.Column('user_id', sa.UUID(), nullable=True),
    sa.Column('phone', sa.String(length=32), nullable=True),
    sa.Column('temporary', sa.Boolean(), server_default=sa.text('false'), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('channel', 'external_id')
    )
    op.create_table('link_codes',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=False),
    sa.Column('code_hmac', sa.String(length=128), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('used_by_phone', sa.String(length=32), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('code_hmac')
    )
    op.create_table('memberships',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('role', sa.String(length=10), server_default='member', nullable=False),
    sa.Column('permissions', postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False),
    sa.Column('joined_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('left_at', sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint("role in ('owner','admin','member')", name='role_valid'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('org_id', 'user_id')
    )
    op.create_table('memories',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=True),
    sa.Column('level', sa.String(length=10), nullable=False),
    sa.Column('owner_user_id', sa.UUID(), nullable=True),
    sa.Column('owner_phone', sa.String(length=32), nullable=True),
    sa.Column('area', sa.String(length=30), server_default='general', nullable=False),
    sa.Column('category', sa.String(length=20), nullable=False),
    sa.Column('subject', sa.String(length=200), nullable=False),
    sa.Column('attribute', sa.String(length=100), nullable=False),
    sa.Column('value', sa.Text(), nullable=False),
    sa.Column('sentence', sa.Text(), nullable=False),
    sa.Column('confidence', sa.Float(), server_default='0.8', nullable=False),
    sa.Column('pinned', sa.Boolean(), server_default=sa.text('false'), nullable=False),
    sa.Column('status', sa.String(length=12), server_default='active', nullable=False),
    sa.Column('proposal_kind', sa.String(length=20), nullable=True),
    sa.Column('proposal_rule', sa.Text(), nullable=True),
    sa.Column('replaces_id', sa.UUID(), nullable=True),
    sa.Column('decided_by', sa.UUID(), nullable=True),
    sa.Column('decided_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('decision_reason', sa.Text(), nullable=True),
    sa.Column('author_user_id', sa.UUID(), nullable=True),
    sa.Column('author_phone', sa.String(length=32), nullable=True),
    sa.Column('author_former_member', sa.Boolean(), server_default=sa.text('false'), nullable=False),
    sa.Column('origin', sa.String(length=12), server_default='background', nullable=False),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True),
    sa.Column('superseded_by', sa.UUID(), nullable=True),
    sa.Column('hand_edited', sa.Boolean(), server_default=sa.text('false'), nullable=False),
    sa.Column('event_date', sa.Date(), nullable=True),
    sa.Column('embedding', pgvector.sqlalchemy.vector.VECTOR(dim=512), nullable=True),
    sa.Column('embed_model', sa.String(length=80), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('search_tsv', postgresql.TSVECTOR(), sa.Computed("to_tsvector('public.spanish_unaccent', coalesce(sentence || ' ' || value || ' ' || attribute, ''))", persisted=True), nullable=False),
    sa.CheckConstraint("category in ('person','company','customer','supplier','preference','event','sheet')", name='memory_category_valid'),
    sa.CheckConstraint("level = 'personal' or org_id is not null", name='memory_org_scoped'),
    sa.CheckConstraint("level = 'shared' or owner_user_id is not null or owner_phone is not null", name='memory_owned'),
    sa.CheckConstraint("level in ('personal','private','shared')", name='memory_level_valid'),
    sa.CheckConstraint("proposal_kind is null or proposal_kind in ('bank_account','confirmation','low_permission')", name='memory_proposal_kind_valid'),
    sa.CheckConstraint("status in ('active','superseded','proposed','rejected')", name='memory_status_valid'),
    sa.ForeignKeyConstraint(['author_user_id'], ['users.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['decided_by'], ['users.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['replaces_id'], ['memories.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['superseded_by'], ['memories.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_memories_embedding', 'memories', ['embedding'], unique=False, postgresql_using='hnsw', postgresql_ops={'embedding': 'vector_cosine_ops'})
    op.create_index('ix_memories_org_subject', 'memories', ['org_id', 'subject', 'status'], unique=False)
    op.create_index('ix_memories_owner_phone', 'memories', ['owner_phone', 'status'], unique=False)
    op.create_index('ix_memories_owner_user', 'memories', ['owner_user_id', 'status'], unique=False)
    op.create_index('ix_memories_proposed', 'memories', ['org_id', 'proposal_kind', 'created_at'], unique=False, postgresql_where=sa.text("status = 'proposed'"))
    op.create_index('ix_memories_sentence_trgm', 'memories', ['sentence'], unique=False, postgresql_using='gin', postgresql_ops={'sentence': 'gin_trgm_ops'})
    op.create_index('ix_memories_superseded', 'memories', ['valid_to'], unique=False, postgresql_where=sa.text("status = 'superseded'"))
    op.create_index('ix_memories_tsv', 'memories', ['search_tsv'], unique=False, postgresql_using='gin')
    op.create_index('uq_memories_active_fact', 'memories', [sa.literal_column("coalesce(org_id, '00000000-0000-0000-0000-000000000000'::uuid)"), 'level', sa.literal_column("coalesce(owner_user_id, '00000000-0000-0000-0000-000000000000'::uuid)"), sa.literal_column("coalesce(owner_phone, '')"), 'subject', 'attribute'], unique=True, postgresql_where=sa.text("status = 'active'"))
    op.create_table('phone_authorizations',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=False),
    sa.Column('phone', sa.String(length=32), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=True),
    sa.Column('permissions', postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('org_id', 'phone')
    )
    op.create_index('ix_phone_auth_phone', 'phone_authorizations', ['phone'], unique=False)
    op.create_table('policy_exclusions',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=True),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('pattern', sa.Text(), nullable=False),
    sa.Column('validator', sa.String(length=20), nullable=True),
    sa.Column('description', sa.Text(), server_default='', nullable=False),
    sa.Column('enabled', sa.Boolean(), server_default=sa.text('true'), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint("kind in ('secret','special')", name='policy_kind_valid'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('org_id', 'name')
    )
    op.create_table('privacy_requests',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('kind', sa.String(length=10), nullable=False),
    sa.Column('subject_type', sa.String(length=20), nullable=False),
    sa.Column('subject_ref', sa.String(length=200), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=True),
    sa.Column('requested_by', sa.String(length=300), nullable=False),
    sa.Column('basis', sa.Text(), server_default='', nullable=False),
    sa.Column('verification', sa.Text(), server_default='', nullable=False),
    sa.Column('status', sa.String(length=12), server_default='received', nullable=False),
    sa.Column('due_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('preview', postgresql.JSONB(astext_type=sa.Text()), nullable=True),
    sa.Column('receipt', postgresql.JSONB(astext_type=sa.Text()), nullable=True),
    sa.Column('progress', postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False),
    sa.Column('handled_by', sa.UUID(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint("kind in ('erasure','access')", name='privacy_kind_valid'),
    sa.CheckConstraint("status in ('received','verified','previewed','executed','rejected')", name='privacy_status_valid'),
    sa.CheckConstraint("subject_type in ('user','phone','contact','conversation')", name='privacy_subject_valid'),
    sa.ForeignKeyConstraint(['handled_by'], ['users.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('conversation_summaries',
    sa.Column('conversation_id', sa.UUID(), nullable=False),
    sa.Column('content', postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False),
    sa.Column('covered_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('compactions', sa.Integer(), server_default='0', nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('conversation_id')
    )
    op.create_table('documents',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('external_ref', sa.String(length=200), nullable=False),
    sa.Column('title', sa.Text(), server_default='', nullable=False),
    sa.Column('text', sa.Text(), server_default='', nullable=False),
    sa.Column('contact_id', sa.UUID(), nullable=True),
    sa.Column('tax_id', sa.String(length=40), nullable=True),
    sa.Column('owner_user_id', sa.UUID(), nullable=True),
    sa.Column('owner_phone', sa.String(length=32), nullable=True),
    sa.Column('visibility', sa.String(length=20), server_default='shared_in_org', nullable=False),
    sa.Column('area', sa.String(length=30), server_default='documents', nullable=False),
    sa.Column('doc_date', sa.Date(), nullable=True),
    sa.Column('legal_hold', sa.Boolean(), server_default=sa.text('false'), nullable=False),
    sa.Column('embedding', pgvector.sqlalchemy.vector.VECTOR(dim=512), nullable=True),
    sa.Column('embed_model', sa.String(length=80), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('search_tsv', postgresql.TSVECTOR(), sa.Computed("to_tsvector('public.spanish_unaccent', coalesce(title || ' ' || text || ' ' || external_ref || ' ' || coalesce(tax_id, ''), ''))", persisted=True), nullable=False),
    sa.CheckConstraint("kind in ('invoice','quote','expense','document')", name='document_kind_valid'),
    sa.CheckConstraint("visibility in ('private_in_org','shared_in_org')", name='document_visibility_valid'),
    sa.ForeignKeyConstraint(['contact_id'], ['contacts.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('org_id', 'kind', 'external_ref')
    )
    op.create_index('ix_documents_embedding', 'documents', ['embedding'], unique=False, postgresql_using='hnsw', postgresql_ops={'embedding': 'vector_cosine_ops'})
    op.create_index('ix_documents_title_trgm', 'documents', ['title'], unique=False, postgresql_using='gin', postgresql_ops={'title': 'gin_trgm_ops'})
    op.create_index('ix_documents_tsv', 'documents', ['search_tsv'], unique=False, postgresql_using='gin')
    op.create_table('messages',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('conversation_id', sa.UUID(), nullable=False),
    sa.Column('channel', sa.String(length=30), nullable=False),
    sa.Column('external_id', sa.String(length=200), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=True),
    sa.Column('user_id', sa.UUID(), nullable=True),
    sa.Column('phone', sa.String(length=32), nullable=True),
    sa.Column('visibility', sa.String(length=20), server_default='private_in_org', nullable=False),
    sa.Column('area', sa.String(length=30), server_default='general', nullable=False),
    sa.Column('role', sa.String(length=20), nullable=False),
    sa.Column('text', sa.Text(), server_default='', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('edited_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('deleted_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('embedding', pgvector.sqlalchemy.vector.VECTOR(dim=512), nullable=True),
    sa.Column('embed_model', sa.String(length=80), nullable=True),
    sa.Column('search_tsv', postgresql.TSVECTOR(), sa.Computed("to_tsvector('public.spanish_unaccent', coalesce(text, ''))", persisted=True), nullable=False),
    sa.CheckConstraint("role in ('user','assistant','system','tool')", name='message_role_valid'),
    sa.CheckConstraint("visibility in ('private_in_org','shared_in_org')", name='message_visibility_valid'),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('channel', 'external_id')
    )
    op.create_index('ix_messages_conversation', 'messages', ['conversation_id', 'created_at'], unique=False)
    op.create_index('ix_messages_embedding', 'messages', ['embedding'], unique=False, postgresql_using='hnsw', postgresql_ops={'embedding': 'vector_cosine_ops'})
    op.create_index('ix_messages_owner', 'messages', ['org_id', 'user_id'], unique=False)
    op.create_index('ix_messages_phone', 'messages', ['phone'], unique=False)
    op.create_index('ix_messages_text_trgm', 'messages', ['text'], unique=False, postgresql_using='gin', postgresql_ops={'text': 'gin_trgm_ops'})
    op.create_index('ix_messages_tsv', 'messages', ['search_tsv'], unique=False, postgresql_using='gin')
    op.create_table('notifications',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=True),
    sa.Column('user_id', sa.UUID(), nullable=True),
    sa.Column('phone', sa.String(length=32), nullable=True),
    sa.Column('conversation_id', sa.UUID(), nullable=True),
    sa.Column('memory_id', sa.UUID(), nullable=True),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('data', postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('undone_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['memory_id'], ['memories.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_notifications_phone', 'notifications', ['phone', 'delivered_at'], unique=False)
    op.create_index('ix_notifications_user', 'notifications', ['user_id', 'delivered_at'], unique=False)
    op.create_table('memory_sources',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('memory_id', sa.UUID(), nullable=False),
    sa.Column('message_id', sa.UUID(), nullable=True),
    sa.Column('conversation_id', sa.UUID(), nullable=True),
    sa.Column('source_memory_id', sa.UUID(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['memory_id'], ['memories.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['message_id'], ['messages.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['source_memory_id'], ['memories.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('memory_id', 'message_id')
    )
    op.create_index('ix_memory_sources_conversation', 'memory_sources', ['conversation_id'], unique=False)
    op.create_index('ix_memory_sources_message', 'memory_sources', ['message_id'], unique=False)
    op.create_index('ix_memory_sources_source_memory', 'memory_sources', ['source_memory_id'], unique=False)
    op.create_table('memory_traces',
    sa.Column('id', sa.UUID(), server_default=sa.text('uuidv7()'), nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=True),
    sa.Column('conversation_id', sa.UUID(), nullable=True),
    sa.Column('message_id', sa.UUID(), nullable=True),
    sa.Column('user_id', sa.UUID(), nullable=True),
    sa.Column('phone', sa.String(length=32), nullable=True),
    sa.Column('channel', sa.String(length=30), nullable=True),
    sa.Column('block_text', sa.Text(), nullable=False),
    sa.Column('tokens', sa.Integer(), server_default='0', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['message_id'], ['messages.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_traces_conversation', 'memory_traces', ['conversation_id', 'created_at'], unique=False)
    op.create_index('ix_traces_org_created', 'memory_traces', ['org_id', 'created_at'], unique=False)
    op.create_table('outbox',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('message_id', sa.UUID(), nullable=False),
    sa.Column('event', sa.String(length=20), server_default='new', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('processed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['message_id'], ['messages.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_outbox_message', 'outbox', ['message_id'], unique=False)
    op.create_index('ix_outbox_pending', 'outbox', ['id'], unique=False, postgresql_where=sa.text('processed_at is null'))
    op.create_table('usage_ledger',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('org_id', sa.UUID(), nullable=True),
    sa.Column('message_id', sa.UUID(), nullable=True),
    sa.Column('purpose', sa.String(length=40), nullable=False),
    sa.Column('model', sa.String(length=120), nullable=False),
    sa.Column('input_tokens', sa.Integer(), server_default='0', nullable=False),
    sa.Column('output_tokens', sa.Integer(), server_default='0', nullable=False),
    sa.Column('cost_usd', sa.Numeric(precision=14, scale=8), server_default='0', nullable=False),
    sa.Column('run_tag', sa.String(length=80), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['message_id'], ['messages.id'], ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['org_id'], ['organizations.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_usage_org_day', 'usage_ledger', ['org_id', 'created_at'], unique=False)
    op.create_index('ix_usage_run_tag', 'usage_ledger', ['run_tag'], unique=False)
    op.create_table('trace_items',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('trace_id', sa.UUID(), nullable=False),
    sa.Column('memory_id', sa.UUID(), nullable=True),
    sa.Column('block', sa.String(length=10), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=False),
    sa.Column('score', sa.Float(), nullable=False),
    sa.Column('chars', sa.Integer(), nullable=False),
    sa.Column('used', sa.Boolean(), server_default=sa.text('false'), nullable=False),
    sa.ForeignKeyConstraint(['memory_id'], ['memories.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['trace_id'], ['memory_traces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_trace_items_memory', 'trace_items', ['memory_id'], unique=False)
    op.create_index('ix_trace_items_trace', 'trace_items', ['trace_id'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_trace_items_trace', table_name='trace_items')
    op.drop_index('ix_trace_items_memory', table_name='trace_items')
    op.drop_table('trace_items')
    op.drop_index('ix_usage_run_tag', table_name='usage_ledger')
    op.drop_index('ix_usage_org_day', table_name='usage_ledger')
    op.drop_table('usage_ledger')
    op.drop_index('ix_outbox_pending', table_name='outbox', postgresql_where=sa.text('processed_at is null'))
    op.drop_index('ix_outbox_message', table_name='outbox')
    op.drop_table('outbox')
    op.drop_index('ix_traces_org_created', table_name='memory_traces')
    op.drop_index('ix_traces_conversation', table_name='memory_traces')
    op.drop_table('memory_traces')
    op.drop_index('ix_memory_sources_source_memory', table_name='memory_sources')
    op.drop_index('ix_memory_sources_message', table_name='memory_sources')
    op.drop_index('ix_memory_sources_conversation', table_name='memory_sources')
    op.drop_table('memory_sources')
    op.drop_index('ix_notifications_user', table_name='notifications')
    op.drop_index('ix_notifications_phone', table_name='notifications')
    op.drop_table('notifications')
    op.drop_index('ix_messages_tsv', table_name='messages', postgresql_using='gin')
    op.drop_index('ix_messages_text_trgm', table_name='messages', postgresql_using='gin', postgresql_ops={'text': 'gin_trgm_ops'})
    op.drop_index('ix_messages_phone', table_name='messages')
    op.drop_index('ix_messages_owner', table_name='messages')
    op.drop_index('ix_messages_embedding', table_name='messages', postgresql_using='hnsw', postgresql_ops={'embedding': 'vector_cosine_ops'})
    op.drop_index('ix_messages_conversation', table_name='messages')
    op.drop_table('messages')
    op.drop_index('ix_documents_tsv', table_name='documents', postgresql_using='gin')
    op.drop_index('ix_documents_title_trgm', table_name='documents', postgresql_using='gin', postgresql_ops={'title': 'gin_trgm_ops'})
    op.drop_index('ix_documents_embedding', table_name='documents', postgresql_using='hnsw', postgresql_ops={'embedding': 'vector_cosine_ops'})
    op.drop_table('documents')
    op.drop_table('conversation_summaries')
    op.drop_table('privacy_requests')
    op.drop_table('policy_exclusions')
    op.drop_index('ix_phone_auth_phone', table_name='phone_authorizations')
    op.drop_table('phone_authorizations')
    op.drop_index('uq_memories_active_fact', table_name='memories', postgresql_where=sa.text("status = 'active'"))
    op.drop_index('ix_memories_tsv', table_name='memories', postgresql_using='gin')
    op.drop_index('ix_memories_superseded', table_name='memories', postgresql_where=sa.text("status = 'superseded'"))
    op.drop_index('ix_memories_sentence_trgm', table_name='memories', postgresql_using='gin', postgresql_ops={'sentence': 'gin_trgm_ops'})
    op.drop_index('ix_memories_proposed', table_name='memories', postgresql_where=sa.text("status = 'proposed'"))
    op.drop_index('ix_memories_owner_user', table_name='memories')
    op.drop_index('ix_memories_owner_phone', table_name='memories')
    op.drop_index('ix_memories_org_subject', table_name='memories')
    op.drop_index('ix_memories_embedding', table_name='memories', postgresql_using='hnsw', postgresql_ops={'embedding': 'vector_cosine_ops'})
    op.drop_table('memories')
    op.drop_table('memberships')
    op.drop_table('link_codes')
    op.drop_table('conversations')
    op.drop_index('ix_contacts_tsv', table_name='contacts', postgresql_using='gin')
    op.drop_index('ix_contacts_org_tax', table_name='contacts')
    op.drop_index('ix_contacts_name_trgm', table_name='contacts', postgresql_using='gin', postgresql_ops={'name': 'gin_trgm_ops'})
    op.drop_table('contacts')
    op.drop_table('api_keys')
    op.drop_table('users')
    op.drop_table('organizations')
    op.drop_index('ix_login_attempts_key_at', table_name='login_attempts')
    op.drop_table('login_attempts')
    op.drop_index('ix_job_runs_job_started', table_name='job_runs')
    op.drop_table('job_runs')
    op.drop_index('ix_audit_org_at', table_name='audit_log')
    op.drop_index('ix_audit_at', table_name='audit_log')
    op.drop_index('ix_audit_action', table_name='audit_log')
    op.drop_table('audit_log')

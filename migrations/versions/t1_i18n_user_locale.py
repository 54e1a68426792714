"""the console language an operator chose: users.ui_locale

users.locale stays the person's language for the memory block and WhatsApp replies (never null, 'es' by
default); ui_locale is null until the person picks a language in the console, so that until then the browser's
Accept-Language decides.

Revision ID: t1_i18n_user_locale
Revises: s9_merge_tenancy_row_security
Create Date: 2026-12-01
"""
from alembic import op
import sqlalchemy as sa

revision = "t1_i18n_user_locale"
down_revision = "s9_merge_tenancy_row_security"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("ui_locale", sa.String(length=5), nullable=True))
    op.create_check_constraint("ui_locale_valid", "users", "ui_locale in ('es', 'en')")


def downgrade() -> None:
    op.drop_constraint("ui_locale_valid", "users", type_="check")
    op.drop_column("users", "ui_locale")

"""join the day's branches: the operator's console language and the web role's narrower scopes

Revision ID: t2_merge_language_scopes
Revises: t1_i18n_user_locale, t1_sysscope_platform_scope
Create Date: 2026-12-01
"""
revision = "t2_merge_language_scopes"
down_revision = ("t1_i18n_user_locale", "t1_sysscope_platform_scope")
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass

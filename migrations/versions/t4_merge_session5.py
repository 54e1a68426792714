"""join the evening's branches: the web and API processes without system scope (links, people, platform)

Revision ID: t4_merge_session5
Revises: t3_sec_links_platform_proof, t3_sec_org_people_scope, t3_sec_platform_scope
Create Date: 2026-12-01
"""
revision = "t4_merge_session5"
down_revision = ("t3_sec_links_platform_proof", "t3_sec_org_people_scope", "t3_sec_platform_scope")
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass

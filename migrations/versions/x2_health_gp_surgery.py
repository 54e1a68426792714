"""Policy: a GP's or dentist's surgery is a place, not health data

"starting on the 2nd of June as practice nurse at a GP surgery in Camden" was refused as health data: the seeded
health pattern reads "surgery" as an operation. In British English a doctor's, dentist's or vet's surgery is their
practice, and its hours or receptionist are no one's health. The seeded row is changed only if it still holds the
pattern memoria seeded; an operator's edit is left as it is.

Revision ID: x2_health_gp_surgery
Revises: x1_business_hours_general
Create Date: 2026-12-08
"""
import sqlalchemy as sa
from alembic import op

revision = "x2_health_gp_surgery"
down_revision = "x1_business_hours_general"
branch_labels = None
depends_on = None

_SURGERY = "surgery"
# A practice: "GP surgery", "the doctor's surgery", "dental surgery", "vet's surgery", "surgery hours".
_PRACTICE = (r"(?<!gp )(?<!gp's )(?<!doctor's )(?<!doctors )(?<!doctor )(?<!dental )(?<!dentist's )(?<!vet's )"
             r"(?<!vets )(?<!vet )surgery(?! hours| receptionist| manager| opening)")
SEEDED = (r"\b(diabet\w*|c(á|a)ncer|depresi(ó|o)n|ansiedad|embaraz\w*|vih|hiv|enfermedad|diagn(ó|o)stic\w*|"
          r"medicaci(ó|o)n|tratamiento m(é|e)dico|quimio\w*|terapia|psiqui\w*|illness|disease|pregnan\w*|diagnos\w*|"
          r"medication|depression|anxiety|surgery|operaci(ó|o)n quir(ú|u)rgica|baja m(é|e)dica)\b")
PATTERN = SEEDED.replace(f"|{_SURGERY}|", f"|{_PRACTICE}|")
assert PATTERN != SEEDED


def _set(old: str, new: str) -> None:
    op.execute(sa.text("update policy_exclusions set pattern = :new where org_id is null and kind = 'special' "
                       "and name = 'health' and pattern = :old").bindparams(old=old, new=new))


def upgrade() -> None:
    _set(SEEDED, PATTERN)


def downgrade() -> None:
    _set(PATTERN, SEEDED)

"""Bodies of the provisioning API: people, authorized phones and organizations, by the host's own ids."""
from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Literal

from pydantic import Field

from api.schemas import Area, In, Out, Phone
from memory_core.domain.vocabulary import ROLES

Role = Literal[ROLES]  # type: ignore[valid-type]
Permissions = Annotated[dict[Area, Literal["read", "edit"]],
                        Field(description="Per area: read or edit. Owners and admins edit every area.")]
Email = Annotated[str, Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")]
Name = Annotated[str, Field(max_length=200)]
Ref = Annotated[str, Field(min_length=1, max_length=200, pattern=r"\S")]


class PersonIn(In):
    email: Email
    name: Name = ""
    role: Role = "member"
    permissions: Permissions = {}
    active: bool = Field(True, description="false deactivates the membership: no access, nothing forgotten")


class PersonOut(Out):
    user_id: uuid.UUID
    external_id: str | None
    email: str
    name: str
    role: str
    permissions: dict[str, str]
    effective_permissions: dict[str, str]
    active: bool
    joined_at: dt.datetime
    created: bool = False


class PeopleOut(Out):
    people: list[PersonOut]


class PhoneIn(In):
    phone: Phone
    person: Ref | None = Field(None, description="The host id of the person behind the number, if any")
    permissions: Permissions = {}
    active: bool = True


class PhoneOut(Out):
    id: uuid.UUID
    external_id: str | None
    phone: str
    user_id: uuid.UUID | None
    permissions: dict[str, str]
    active: bool
    linked: bool = Field(description="The person linked this number from the phone itself")


class PhonesOut(Out):
    phones: list[PhoneOut]


class OrganizationIn(In):
    name: Annotated[str, Field(min_length=1, max_length=200, pattern=r"\S")]
    owner_email: Email | None = None
    owner_name: Name = ""


class OrganizationOut(Out):
    id: uuid.UUID
    external_id: str | None
    name: str
    created: bool = False
    suspended: bool
    members: int | None = None
    owner_invitation_url: str | None = Field(None, description="Shown once, when the org was just created")


class OrganizationsOut(Out):
    organizations: list[OrganizationOut]


class OrgKeyIn(In):
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"\S")]


class OrgKeyOut(Out):
    id: uuid.UUID
    prefix: str
    key: str = Field(description="Shown once; only its SHA-256 is stored")

"""The navigation bar: each page, and who sees it. An entry whose view is not registered is skipped."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from flask import current_app, request, url_for
from flask_login import current_user

from console import bp


def _org_roles(*roles: str) -> Callable[[], bool]:
    return lambda: (o := current_user.org()) is not None and o.role in roles


def _platform(*roles: str) -> Callable[[], bool]:
    return lambda: current_user.platform_role in roles


def _any(*checks: Callable[[], bool]) -> Callable[[], bool]:
    return lambda: any(c() for c in checks)


MEMBER = _org_roles("owner", "admin", "member")
ADMIN = _org_roles("owner", "admin")


@dataclass(frozen=True)
class NavEntry:
    endpoint: str
    label: str
    visible: Callable[[], bool]


NAV = [
    NavEntry("console.home", "Dashboard", lambda: True),
    NavEntry("review.queue", "Review", MEMBER),
    NavEntry("console.memories", "Memories", MEMBER),
    NavEntry("console.contacts", "Contacts", MEMBER),
    NavEntry("console.traces", "Traces", _any(ADMIN, _platform("staff"))),
    NavEntry("console.usage", "Usage", _any(ADMIN, _platform("staff"))),
    NavEntry("console.jobs", "Jobs", _any(ADMIN, _platform("staff"))),
    NavEntry("console.privacy", "Privacy", _platform("privacy_officer")),
    NavEntry("console.audit", "Audit log", _any(ADMIN, _platform("staff", "privacy_officer"))),
    NavEntry("console.settings", "Settings", ADMIN),
    NavEntry("console.api_keys", "API keys", ADMIN),
    NavEntry("console.link_whatsapp", "WhatsApp", MEMBER),
    NavEntry("console.my_memory_page", "My memory", lambda: True),
]


@dataclass(frozen=True)
class NavItem:
    url: str
    label: str
    active: bool


@bp.app_context_processor
def _nav():
    def nav_items() -> list[NavItem]:
        rules = current_app.view_functions
        return [NavItem(url_for(e.endpoint), e.label, request.endpoint == e.endpoint)
                for e in NAV if e.endpoint in rules and e.visible()]
    return {"nav_items": nav_items}

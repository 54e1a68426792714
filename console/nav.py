"""The navigation bar: each page, and who sees it. An entry whose view is not registered is skipped."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import current_app, request, url_for
from flask_babel import lazy_gettext as _l
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
    NavEntry("console.home", _l("Dashboard"), lambda: True),
    NavEntry("review.queue", _l("Review"), MEMBER),
    NavEntry("console.memories", _l("Memories"), MEMBER),
    NavEntry("console.contacts", _l("Contacts"), MEMBER),
    NavEntry("console.traces", _l("Traces"), _any(ADMIN, _platform("staff"))),
    NavEntry("console.usage", _l("Usage"), _any(ADMIN, _platform("staff"))),
    NavEntry("console.jobs", _l("Jobs"), _any(ADMIN, _platform("staff"))),
    NavEntry("console.privacy", _l("Privacy"), _platform("privacy_officer")),
    NavEntry("console.audit", _l("Audit log"), _any(ADMIN, _platform("staff", "privacy_officer"))),
    NavEntry("console.settings", _l("Settings"), ADMIN),
    NavEntry("console.api_keys", _l("API keys"), ADMIN),
    NavEntry("console.people", _l("People"), ADMIN),
    NavEntry("console.platform_orgs", _l("Organizations"), _platform("platform_admin")),
    NavEntry("console.platform_people", _l("Platform roles"), _platform("platform_admin")),
    NavEntry("console.platform_keys", _l("Platform keys"), _platform("platform_admin")),
    NavEntry("console.link_whatsapp", _l("WhatsApp"), MEMBER),
    NavEntry("console.my_memory_page", _l("My memory"), lambda: True),
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
        return [NavItem(url_for(e.endpoint), str(e.label), request.endpoint == e.endpoint)
                for e in NAV if e.endpoint in rules and e.visible()]
    return {"nav_items": nav_items}

"""The console's language: Spanish or English, never mixed. Chosen by the operator (saved on their account, or in
a cookie before sign-in), else the browser's Accept-Language, else English. Flask-Babel translates the pages and
formats their dates and numbers in that language."""
from __future__ import annotations

import datetime as dt
from functools import lru_cache

from flask import Flask, current_app, g, has_request_context, request
from flask_babel import Babel, LazyString, format_date, format_datetime, format_decimal, format_time, gettext
from flask_login import current_user
from jinja2 import pass_eval_context
from markupsafe import Markup

from memory_core.adapters.outage import OUTAGE_ERRORS
from memory_core.domain import labels
from memory_core.tenancy.preferences import CONSOLE_LANGUAGES

# Each language by its own name, as a switch shows it.
LANGUAGES = {code: {"es": "Español", "en": "English"}[code] for code in CONSOLE_LANGUAGES}
DEFAULT = "en"
COOKIE = "memoria_language"
COOKIE_MAX_AGE = 365 * 24 * 3600


def chosen(value: str | None) -> str | None:
    """A language the console speaks, or None."""
    value = (value or "").strip().lower()[:2]
    return value if value in LANGUAGES else None


def _saved_choice() -> str | None:
    """The signed-in operator's saved language; None before sign-in or while the database is down."""
    try:
        return chosen(getattr(current_user, "ui_locale", None)) if current_user.is_authenticated else None
    except OUTAGE_ERRORS:
        return None


def select_language() -> str:
    try:  # one look into `g`: a page asks ~900 times (every _(), term and label)
        return g.memoria_language
    except AttributeError:
        g.memoria_language = (_saved_choice() or chosen(request.cookies.get(COOKIE))
                              or request.accept_languages.best_match(list(LANGUAGES)) or DEFAULT)
        return g.memoria_language


def remember(response, language: str):
    """Keep the choice in a cookie too, so the sign-in page speaks it after sign-out."""
    settings = current_app.config["MEMORIA_SETTINGS"]
    response.set_cookie(COOKIE, language, max_age=COOKIE_MAX_AGE, httponly=True, samesite="Lax",
                        secure=settings.secure_cookies)
    return response


@lru_cache(maxsize=4096)
def _translated(language: str, string: str) -> str:
    """A template's string in `language` (the request's: Flask-Babel's catalogs never change while a process runs)."""
    return gettext(string)


@lru_cache(maxsize=4096)
def _markup(language: str, string: str) -> Markup:
    return Markup(_translated(language, string)) % {}


@pass_eval_context
def template_gettext(eval_ctx, string: str, **variables) -> str:
    """`_()` in a template: what Jinja's i18n extension makes of Flask-Babel's gettext (newstyle: the translation
    is a format string, always formatted, its values escaped when the template escapes), with each language's
    translation of a string looked up once per process. A page calls it hundreds of times, and Flask-Babel walks
    the request's context to find the catalog on every call."""
    if not has_request_context():
        rv = gettext(string)
    elif eval_ctx.autoescape and not variables:
        return _markup(select_language(), string)
    else:
        rv = _translated(select_language(), string)
    if eval_ctx.autoescape:
        rv = Markup(rv)
    return rv % variables


def init_language(app: Flask) -> None:
    Babel(app, locale_selector=select_language)
    # After Babel, which installs Jinja's i18n callables: `_` and `gettext` become the cached lookup above.
    app.jinja_env.globals.update(_=template_gettext, gettext=template_gettext)
    app.jinja_env.globals["LANGUAGES"] = LANGUAGES
    app.jinja_env.globals["current_language"] = select_language
    app.jinja_env.filters.update(FILTERS)


# Dates, times and amounts as the page's language writes them (UTC, the project's only zone).

@lru_cache(maxsize=4096)
def _day(language: str, value: dt.date) -> str:
    return format_date(value, "medium")


def day(value) -> str:
    """A day (of a date or a datetime, as Babel takes it: the datetime's own date), each language's spelling of a
    day worked out once per process: Babel's month names cost a quarter of a millisecond a call, 150 on a page."""
    if not value:
        return "—"
    if not has_request_context():
        return format_date(value, "medium")
    return _day(select_language(), value.date() if isinstance(value, dt.datetime) else value)


def when(value) -> str:
    return format_datetime(value, "medium") if value else "—"


def clock_time(value) -> str:
    return format_time(value, "short") if value else "—"


def number(value, digits: int = 0) -> str:
    return format_decimal(value, format=f"#,##0.{'0' * digits}" if digits else "#,##0") if value is not None else "—"


def money(value, digits: int = 2) -> str:
    """An amount in US dollars (what the model providers bill in), with `digits` decimals."""
    if value is None:
        return "—"
    return labels.money(value, select_language(), digits)


def term(value, family: str) -> str:
    """An internal word (a status, a level, an area...) as the page's language names it."""
    return labels.term(family, value, select_language())


def attribute_label(value) -> str:
    return labels.attribute(value, select_language())


FILTERS = {"day": day, "when": when, "clock": clock_time, "number": number, "money": money, "term": term,
           "attribute_label": attribute_label}


def lazy_term(family: str, value: str) -> LazyString:
    """A term for a form's choices, built before any request: named in the page's language when rendered."""
    return LazyString(term, value, family)


def said(exc: BaseException) -> str:
    """A domain error's message in the page's language: the catalog has the domain's messages (web/domain_messages.py);
    one it lacks stays as the domain wrote it. A message with values is translated as its template, then filled."""
    template, values = getattr(exc, "template", None) or str(exc), getattr(exc, "values", None) or {}
    return gettext(template, **values) if template else template

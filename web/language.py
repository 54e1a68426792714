"""The console's language: Spanish or English, never mixed. Chosen by the operator (saved on their account, or in
a cookie before sign-in), else the browser's Accept-Language, else English. Flask-Babel translates the pages and
formats their dates and numbers in that language."""
from __future__ import annotations

import datetime as dt
from functools import lru_cache

from babel import dates
from flask import Flask, current_app, g, has_request_context, request
from flask_babel import (
    Babel,
    LazyString,
    format_date,
    format_datetime,
    format_decimal,
    format_time,
    get_locale,
    gettext,
)
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


@lru_cache(maxsize=8)
def _datetime_pattern(language: str) -> str:
    """How the language joins a day and a time ("{1}, {0}"), as Babel's medium datetime reads it."""
    return dates.get_datetime_format("medium", locale=get_locale()).replace("'", "")


@lru_cache(maxsize=8192)
def _clock_medium(language: str, value: dt.time) -> str:
    return dates.format_time(value, "medium", locale=get_locale())


def when(value) -> str:
    """A moment in UTC as Flask-Babel's `format_datetime(value, "medium")` writes it, from the day and the time of
    day each worked out once per process and language: a list page writes fifty of them, at ~0.1 ms each."""
    if not value:
        return "—"
    if not has_request_context():
        return format_datetime(value, "medium")
    language = select_language()
    utc = value.astimezone(dt.timezone.utc) if value.tzinfo is not None else value  # naive: UTC, as Babel takes it
    return (_datetime_pattern(language).replace("{0}", _clock_medium(language, utc.time().replace(microsecond=0)))
            .replace("{1}", _day(language, utc.date())))


def clock_time(value) -> str:
    return format_time(value, "short") if value else "—"


@lru_cache(maxsize=4096)
def _whole_number(language: str, value: int, digits: int) -> str:
    return format_decimal(value, format=f"#,##0.{'0' * digits}" if digits else "#,##0")


def number(value, digits: int = 0) -> str:
    if value is None:
        return "—"
    if type(value) is int and has_request_context():  # counts repeat on a page (and across pages): once each
        return _whole_number(select_language(), value, digits)
    return format_decimal(value, format=f"#,##0.{'0' * digits}" if digits else "#,##0")


def money(value, digits: int = 2) -> str:
    """An amount in US dollars (what the model providers bill in), with `digits` decimals."""
    if value is None:
        return "—"
    return labels.money(value, select_language(), digits)


def term(value, family: str) -> str:
    """An internal word (a status, a level, an area...) as the page's language names it."""
    return labels.term(family, value, select_language())


@lru_cache(maxsize=4096)
def _attribute(language: str, value: str | None) -> str:
    return labels.attribute(value, language)


def attribute_label(value) -> str:
    return _attribute(select_language(), value)


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

"""The one date parser: Spanish and English date expressions, absolute or relative to a day."""
from __future__ import annotations

import calendar
import datetime as dt
import re

MONTHS = {"enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8,
           "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12,
           "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
           "september": 9, "october": 10, "november": 11, "december": 12}
_MONTH_NAMES_ES = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
                   "noviembre", "diciembre")
WEEKDAYS = {"lunes": 0, "martes": 1, "miercoles": 2, "jueves": 3, "viernes": 4, "sabado": 5, "domingo": 6,
             "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
# A weekday's name, folded, or its plural ("los viernes", "on Fridays").
WEEKDAY_WORD = rf"(?:{'|'.join(WEEKDAYS)})s?"
# Words that name a day on their own ("Yesterday, I went to a fair", "Ayer, fui a la feria"), folded.
DAY_WORDS = frozenset({"ayer", "anoche", "anteayer", "hoy", "manana", "yesterday", "today", "tonight", "tomorrow",
                       *WEEKDAYS, *MONTHS})


def day_of_year(day: dt.date, english: bool = False) -> str:
    """The day and month of `day` as said in the language: "3 de mayo", "May 3"."""
    return f"{day:%B} {day.day}" if english else f"{day.day} de {_MONTH_NAMES_ES[day.month - 1]}"


# A month's name, folded, the longest first: the one alternation of months the date patterns and the rules use.
MONTH_WORD = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + ")"
_MONTH = f"(?P<m>{MONTH_WORD})"
_FIRST_MONTH = _MONTH.replace("?P<m>", "?P<m1>")  # a span's first month, when it is not its last one's
# Counts written as words ("en dos semanas", "in a week", "dentro de quince días").
COUNTS = {"un": 1, "una": 1, "uno": 1, "a": 1, "an": 1, "one": 1, "dos": 2, "two": 2, "tres": 3, "three": 3,
          "cuatro": 4, "four": 4, "cinco": 5, "five": 5, "seis": 6, "six": 6, "siete": 7, "seven": 7, "ocho": 8,
          "eight": 8, "nueve": 9, "nine": 9, "diez": 10, "ten": 10, "quince": 15, "fifteen": 15, "veinte": 20,
          "twenty": 20, "treinta": 30, "thirty": 30}
_COUNT = "(?:" + "|".join(sorted(COUNTS, key=len, reverse=True)) + ")"
# "los viernes", "cada viernes" is every Friday, no date (Spanish weekdays in -s are the same in the plural).
_WEEKDAY = "(?<!los )(?<!cada )(?P<w>" + "|".join(WEEKDAYS) + ")"
_DATE_PATTERNS: list[tuple[str, str]] = [
    # "del 10 al 24 de agosto", "del 24 de diciembre al 6 de enero", "from the 24th to the 31st of December", "from
    # 3 to 10 July": its first day.
    ("range", rf"\b(?:del?|from)\s+(?:el\s+|the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+(?:de\s+|of\s+)?{_FIRST_MONTH})?"
              rf"\s+(?:al|a|to|until|till)\s+(?:el\s+|the\s+)?(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:de\s+|of\s+)?{_MONTH}\b"),
    ("dm", rf"\b(?:el\s+|on\s+(?:the\s+)?|the\s+)?(?:dia\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:de\s+|of\s+)?{_MONTH}(?:,?\s+(?:de\s+|del\s+)?(?P<y>\d{{4}}))?\b"),
    ("md", rf"\b(?:on\s+)?{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?\b"),
    ("numeric", r"\b(?:el\s+|on\s+)?(?P<d>\d{1,2})/(?P<mn>\d{1,2})(?:/(?P<y>\d{2,4}))?\b"),
    ("day_next_month", r"\b(?:el\s+(?:dia\s+)?|the\s+)(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:del mes que viene|"
                       r"del proximo mes|of next month)\b"),
    ("after_tomorrow", r"\b(?:pasado manana|the day after tomorrow)\b"),
    ("tomorrow", r"(?<!la )(?<!esta )(?<!por )\b(?:manana|tomorrow)\b"),
    ("today", r"\b(?:hoy|esta tarde|esta noche|today|tonight|this afternoon|this evening)\b"),
    ("next_weekend", r"\b(?:el fin de semana que viene|el proximo fin de semana|el finde que viene|next weekend)\b"),
    ("last_weekend", r"\b(?:el fin de semana pasado|el pasado fin de semana|el finde pasado|last weekend|"
                     r"this past weekend)\b"),
    ("weekend", r"\b(?:este fin de semana|el fin de semana|este finde|el finde|this weekend|at the weekend|"
                r"on the weekend)\b(?!\s+pasado)"),
    ("next_week", r"\b(?:la semana que viene|la proxima semana|la semana proxima|next week)\b"),
    # "a finales de mes", "a principios de febrero", "at the end of the month", "in mid-March".
    ("month_part", rf"\b(?P<part>a principios del?|a primeros del?|a comienzos del?|early|at the beginning of|"
                   rf"at the start of|a mediados del?|mid-?|in the middle of|a finales del?|a fin del?|a final del?|late|"
                   rf"at the end of|by the end of)\s*(?:(?:este |the |this )?(?:mes|month)|{_MONTH})\b"),
    ("next_month", r"\b(?:el mes que viene|el proximo mes|el mes proximo|next month)\b"),
    # "el lunes 14": the 14th, a Monday.
    ("weekday_day", rf"\b(?:el\s+|on\s+)?{_WEEKDAY},?\s+(?:dia\s+|the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b"
                    rf"(?!\s*(?:[:.,]\d|%|h\b|am\b|pm\b|horas?|hours?|people|personas|euros?|€))"),
    ("weekday", rf"\b(?P<last>last\s+|this past\s+|el pasado\s+)?(?:el\s+|este\s+|el proximo\s+|next\s+|this\s+|"
                rf"on\s+)?{_WEEKDAY}(?P<ago>\s+pasado)?(?:\s+que viene|\s+proximo)?\b"),
    ("in_days", rf"\b(?:dentro de|en|in)\s+(?P<n>\d{{1,2}}|{_COUNT})\s+(?P<unit>dias?|semanas?|mes|meses|days?|weeks?|"
                rf"months?)\b"),
    # "el día 14", "on the 14th": that day of this month, or of the next once it has gone.
    ("day", r"\b(?:el\s+dia\s+|(?:on|by)\s+the\s+(?=\d{1,2}(?:st|nd|rd|th)\b))(?P<d>\d{1,2})(?:st|nd|rd|th)?\b"
            r"(?!\s*(?:%|de\s|of\s|del\s))"),
    ("month", rf"\b(?:en|in|durante|during)\s+{_MONTH}\b"),
]
_DATE_RES = [(kind, re.compile(p)) for kind, p in _DATE_PATTERNS]
_RANGE = dict(_DATE_RES)["range"]


# The longest an event may last, in days after its first: a closure, a holiday, a season, not a year. A date search
# reads events from this many days before its span (reading/search.py); the memories table checks it.
EVENT_SPAN_MAX_DAYS = 183


def event_last_day(first: dt.date | None, last: dt.date | None) -> dt.date | None:
    """The last day an event from `first` keeps: `last` when it comes after `first` by at most EVENT_SPAN_MAX_DAYS,
    else None (an event of one day, a last day before the first, or a span too long to be one event)."""
    if first is None or last is None or not first < last <= first + dt.timedelta(days=EVENT_SPAN_MAX_DAYS):
        return None
    return last


def span_until(low: str, first: dt.date) -> dt.date | None:
    """The last day of a folded date expression that names a span of days ("del 1 al 15 de agosto", "from the 24th
    to the 31st of December", "del 24 de diciembre al 6 de enero"), which find_date read as `first`; None when it
    names one day."""
    m = _RANGE.fullmatch(low.strip())
    if m is None:
        return None
    month, day = MONTHS[m.group("m")], int(m.group("d2"))
    year = first.year + ((month, day) < (first.month, first.day))
    try:
        return event_last_day(first, dt.date(year, month, day))
    except ValueError:  # "del 1 al 31 de junio"
        return None


def _future(today: dt.date, month: int, day: int, year: int | None) -> dt.date | None:
    try:
        if year:
            return dt.date(year if year > 100 else 2000 + year, month, day)
        date = dt.date(today.year, month, day)
        return date if date >= today else dt.date(today.year + 1, month, day)
    except ValueError:
        return None


def _latest(today: dt.date, month: int, day: int, year: int | None) -> dt.date | None:
    """A day and month told of the past: its latest occurrence up to today, unless a year is written."""
    try:
        if year:
            return dt.date(year if year > 100 else 2000 + year, month, day)
        date = dt.date(today.year, month, day)
        return date if date <= today else dt.date(today.year - 1, month, day)
    except ValueError:
        return None


def _coming_weekday(today: dt.date, weekday: int) -> dt.date:
    """The next such weekday after today ("el jueves", "next Thursday")."""
    return today + dt.timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _last_weekday(today: dt.date, weekday: int) -> dt.date:
    """The last such weekday before today ("el viernes pasado", "last Friday")."""
    return today - dt.timedelta(days=(today.weekday() - weekday) % 7 or 7)


def _add_months(day: dt.date, n: int) -> dt.date:
    """The same day n months on, or that month's last day when it is shorter ("dentro de un mes")."""
    y, m = divmod(day.year * 12 + day.month - 1 + n, 12)
    return dt.date(y, m + 1, min(day.day, calendar.monthrange(y, m + 1)[1]))


# How far "el lunes 14" looks for a Monday the 14th before it takes the weekday for a slip and keeps the day.
_WEEKDAY_DAY_MONTHS = 3


def _days_numbered(today: dt.date, d: int, step: int):
    """Days of the month numbered d, from today's month on (step 1) or back (step -1)."""
    for ahead in range(0, 13 * step, step):
        y, m = divmod(today.year * 12 + today.month - 1 + ahead, 12)
        if d <= calendar.monthrange(y, m + 1)[1]:
            yield dt.date(y, m + 1, d)


def _numbered_day(today: dt.date, d: int, weekday: int | None = None, past: bool = False) -> dt.date | None:
    """The next day numbered d from today on ("el día 14"), or with `past` the latest up to today; with a
    weekday ("el lunes 14") the nearest such day that falls on it within a few months, else the day alone."""
    if not 1 <= d <= 31:
        return None
    days = [day for day in _days_numbered(today, d, -1 if past else 1) if (day <= today if past else day >= today)]
    near = [day for day in days if abs((day - today).days) <= 31 * _WEEKDAY_DAY_MONTHS]
    match = next((day for day in near if weekday is not None and day.weekday() == weekday), None)
    return match or (days[0] if days else None)


def _month_part(today: dt.date, part: str, month: int | None) -> dt.date:
    """"a finales de mes" (this month's last day), "a principios de febrero" (1 February), "mid-March" (the 15th):
    the coming one (a part of this month already gone is next month's)."""
    def day_in(y: int, m: int) -> dt.date:
        if part.startswith(("a princip", "a primer", "a comienz", "early", "at the beginning", "at the start")):
            return dt.date(y, m, 1)
        if part.startswith(("a mediados", "mid", "in the middle")):
            return dt.date(y, m, 15)
        return dt.date(y, m, calendar.monthrange(y, m)[1])
    if month is None:
        date = day_in(today.year, today.month)
        if date < today:
            following = _month_start(today, -1)
            date = day_in(following.year, following.month)
        return date
    date = day_in(today.year, month)
    return date if date >= today or month == today.month else day_in(today.year + 1, month)


# Days a sentence told in the past points back at ("I went to a pottery class last Saturday", "fui al
# concierto el sábado pasado"): each resolves to one day before the day the message was sent. A vaguer
# span ("last week", "el mes pasado") names no day: the reader dates it from the words and the send time.
_PAST_PATTERNS: list[tuple[str, str]] = [
    ("before_yesterday", r"\b(?:anteayer|antes de ayer|the day before yesterday)\b"),
    ("yesterday", r"\b(?:ayer|anoche|yesterday|last night)\b"),
    ("weekend", r"\b(?:el fin de semana pasado|el pasado fin de semana|el finde pasado|last weekend|this past weekend|"
                r"over the weekend|at the weekend|on the weekend|este fin de semana|el fin de semana|este finde|el finde)\b"),
    # "el jueves que viene", "next Thursday" in a sentence told in the past ("me dijo que pagaría el jueves que
    # viene") still point forward.
    ("weekday", rf"\b(?P<next>el proximo\s+|next\s+)?(?:el\s+|este\s+|el pasado\s+|last\s+|this past\s+|on\s+|"
                rf"this\s+)?{_WEEKDAY}(?:\s+pasado)?(?P<coming>\s+que viene|\s+proximo)?\b"),
    ("ago", r"\b(?:hace\s+(?P<n1>\d{1,2}|un|una|dos|tres|cuatro|cinco)\s+(?P<u1>dias?|semanas?)|"
            r"(?P<n2>\d{1,2}|a|one|two|three|four|five)\s+(?P<u2>days?|weeks?)\s+ago)\b"),
    ("today", r"\b(?:hoy|esta manana|esta tarde|esta noche|today|this morning|this afternoon|this evening|tonight)\b"),
]
_PAST_RES = [(kind, re.compile(p)) for kind, p in _PAST_PATTERNS]


def _past_date(low: str, today: dt.date) -> tuple[dt.date, int, int] | None:
    """The first day a folded sentence told in the past names, before (or on) today, with its span."""
    for kind, regex in _DATE_RES:
        if kind not in ("dm", "md", "numeric", "weekday_day", "day"):
            continue
        m = regex.search(low)
        if m:
            g = m.groupdict()
            if kind in ("weekday_day", "day"):  # "el lunes 14", "el día 14": the latest up to today
                date = _numbered_day(today, int(g["d"]), WEEKDAYS[g["w"]] if g.get("w") else None, past=True)
            else:
                month = MONTHS[g["m"]] if kind != "numeric" else int(g["mn"])
                date = _latest(today, month, int(g["d"]), int(g["y"]) if g.get("y") else None)
            if date is not None:
                return date, m.start(), m.end()
    for kind, regex in _PAST_RES:
        m = regex.search(low)
        if not m or (kind == "weekday" and _DAYS_THAT_RECUR.search(low)):
            continue
        if kind == "before_yesterday":
            date = today - dt.timedelta(days=2)
        elif kind == "yesterday":
            date = today - dt.timedelta(days=1)
        elif kind == "weekend":  # the Saturday of the last weekend before today
            date = _last_weekday(today, 5)
        elif kind == "weekday" and (m.group("next") or m.group("coming")):
            date = _coming_weekday(today, WEEKDAYS[m.group("w")])
        elif kind == "weekday":
            date = _last_weekday(today, WEEKDAYS[m.group("w")])
        elif kind == "ago":
            n_text, unit = (m.group("n1"), m.group("u1")) if m.group("n1") else (m.group("n2"), m.group("u2"))
            n = int(n_text) if n_text.isdigit() else COUNTS[n_text]
            date = today - dt.timedelta(days=n * (7 if unit.startswith(("semana", "week")) else 1))
        else:
            date = today
        return date, m.start(), m.end()
    return None


# Weekdays said as a bare list, after "every" or of each month recur ("solo vengo a la tienda martes y jueves", "every
# Monday", "el último viernes de cada mes"): a schedule, no one day (after "los" and "cada", `_WEEKDAY` already reads none).
_DAYS_THAT_RECUR = re.compile(rf"\b{WEEKDAY_WORD}\s+(?:y|e|o|and|or|&)\s+{WEEKDAY_WORD}\b|"
                              rf"\b(?:every|todos los)\s+{WEEKDAY_WORD}\b|"
                              # a weekday of each month: "the last Friday of every month", "el primer lunes de mes"
                              rf"\b{WEEKDAY_WORD}\s+(?:of|de)\s+(?:every|each|the|cada)?\s*(?:month|mes)\b")


def find_date(low: str, today: dt.date, past: bool = False) -> tuple[dt.date, int, int] | None:
    """The first date expression in a folded sentence, resolved against today, with its span. A sentence
    told in the future or present reads a day without year as the coming one; with `past` (the sentence
    is told in the past: "fui al concierto el 3 de mayo") as the latest one up to today, and "last
    Saturday", "ayer", "hace dos semanas" as the days before today they name."""
    if past:
        return _past_date(low, today)
    for kind, regex in _DATE_RES:
        m = regex.search(low)
        if not m:
            continue
        if kind == "weekday" and _DAYS_THAT_RECUR.search(low):
            continue
        g = m.groupdict()
        date: dt.date | None
        if kind in ("range", "dm", "md"):
            date = _future(today, MONTHS[g.get("m1") or g["m"]], int(g["d"]), int(g["y"]) if g.get("y") else None)
        elif kind == "numeric":
            date = _future(today, int(g["mn"]), int(g["d"]), int(g["y"]) if g.get("y") else None)
        elif kind == "after_tomorrow":
            date = today + dt.timedelta(days=2)
        elif kind == "tomorrow":
            date = today + dt.timedelta(days=1)
        elif kind == "today":
            date = today
        elif kind == "last_weekend":  # its Saturday
            date = _last_weekday(today, 5)
        elif kind == "day_next_month":
            date = _numbered_day(_month_start(today, -1), int(g["d"]))
        elif kind in ("weekend", "next_weekend"):
            date = today + dt.timedelta(days=(5 - today.weekday()) % 7)
            date += dt.timedelta(days=7 if kind == "next_weekend" and date - today < dt.timedelta(days=6) else 0)
        elif kind == "next_week":
            date = today + dt.timedelta(days=7 - today.weekday())
        elif kind == "next_month":
            date = dt.date(today.year + today.month // 12, today.month % 12 + 1, 1)
        elif kind == "weekday":
            w = WEEKDAYS[g["w"]]
            date = _last_weekday(today, w) if g["last"] or g["ago"] else _coming_weekday(today, w)
        elif kind == "weekday_day":
            date = _numbered_day(today, int(g["d"]), WEEKDAYS[g["w"]])
        elif kind == "day":
            date = _numbered_day(today, int(g["d"]))
        elif kind == "month_part":
            date = _month_part(today, g["part"], MONTHS[g["m"]] if g["m"] else None)
        elif kind == "in_days":
            n = int(g["n"]) if g["n"].isdigit() else COUNTS[g["n"]]
            if g["unit"].startswith(("mes", "month")):
                date = _add_months(today, n)
            else:
                date = today + dt.timedelta(days=n * (7 if g["unit"].startswith(("semana", "week")) else 1))
        else:  # month: its first day, or today when it is this month
            month = MONTHS[g["m"]]
            date = today if month == today.month else dt.date(today.year + (month < today.month), month, 1)
        if date is not None:
            return date, m.start(), m.end()
    return None


# --- dates looked back at (search: "what did I invoice last month?") ---

# "hace dos semanas", "hace unos cinco años", "3 months ago", "about five years ago" (a year ago names its year).
_AGO = re.compile(rf"\bhace (?:unos |unas |casi |mas de |cerca de )?(\d+|{_COUNT}) (dia|dias|semana|semanas|mes|meses|"
                  rf"ano|anos)\b|\b(\d+|{_COUNT}) (day|days|week|weeks|month|months|year|years) ago\b")
_PAST_MONTH = re.compile(r"\b(?:en|de|in|of|durante) (" + "|".join(MONTHS) + r")\b(?: (?:de |del )?(\d{4}))?")


def _month_start(day: dt.date, back: int = 0) -> dt.date:
    """The first day of the month `back` months before day's (negative: after)."""
    y, m = divmod(day.year * 12 + day.month - 1 - back, 12)
    return dt.date(y, m + 1, 1)


# Every word one of past_range's forms needs: a text holding none of them names no past range (most texts a block
# dates hold none, and building the forms costs more than this one search).
_PAST_WORD = re.compile(r"\b(?:anteayer|ayer|yesterday|hoy|today|semana|week|mes|month|ano|year|hace|ago|"
                        + "|".join(MONTHS) + r")\b")


def past_range(q: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days a (folded) text's date points back at, [start, end); None when it names none.

    Spanish and English: hoy/today, ayer/yesterday, anteayer, esta semana/this week, la semana pasada/
    last week, este mes/this month, el mes pasado/last month, hace N días|semanas|meses / N days ago,
    hace N años / N years ago (that year),
    "en septiembre" / "in September" (its latest occurrence up to now, or the year given)."""
    if not _PAST_WORD.search(q):
        return None
    monday = today - dt.timedelta(days=today.weekday())
    day = dt.timedelta(days=1)
    fixed = [
        (r"\banteayer\b", (today - 2 * day, today - day)),
        (r"\b(ayer|yesterday)\b", (today - day, today)),
        (r"\b(hoy|today)\b", (today, today + day)),
        (r"\b(la semana pasada|semana pasada|last week)\b", (monday - 7 * day, monday)),
        (r"\b(esta semana|this week)\b", (monday, monday + 7 * day)),
        (r"\b(el mes pasado|mes pasado|last month)\b", (_month_start(today, 1), _month_start(today))),
        (r"\b(este mes|this month)\b", (_month_start(today), _month_start(today, -1))),
        (r"\b(el ano pasado|last year)\b", (dt.date(today.year - 1, 1, 1), dt.date(today.year, 1, 1))),
        (r"\b(este ano|this year)\b", (dt.date(today.year, 1, 1), dt.date(today.year + 1, 1, 1))),
    ]
    for pattern, span in fixed:
        if re.search(pattern, q):
            return span
    if m := _AGO.search(q):
        n_text, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        n = int(n_text) if n_text.isdigit() else COUNTS.get(n_text, 1)
        if unit.startswith(("dia", "day")):
            point, half = today - n * day, 0
            return point, point + day
        if unit.startswith(("ano", "year")):
            return dt.date(today.year - n, 1, 1), dt.date(today.year - n + 1, 1, 1)
        if unit.startswith(("semana", "week")):
            point, half = today - 7 * n * day, 3
        else:
            point, half = today - 30 * n * day, 15
        return point - half * day, point + (half + 1) * day
    if m := _PAST_MONTH.search(q):
        month = MONTHS[m.group(1)]
        year = int(m.group(2)) if m.group(2) else (today.year if month <= today.month else today.year - 1)
        start = dt.date(year, month, 1)
        return start, _month_start(start, -1)
    return None

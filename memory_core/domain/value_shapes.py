"""Values with a shape a person recognises across wordings: a term in days, a phone number, an email address,
an amount of money, a time of day, days of the week. A sentence that says a thing has changed ("ahora",
"changed to", "ha subido", "moved") and gives a value of the same shape as a fact already known about its
subject, but another one, updates that fact (domain.ladder): "green leaf bakery changed to 60 days" after
"pays at 30 days", "panadería roca ahora reparte los miércoles" after "nos trae el pan los lunes"."""
from __future__ import annotations

import re

from memory_core.domain.families import MEMBER_OF
from memory_core.domain.text import fold

# The shape each rule family's values have: a note of that shape may update it, and it a note.
FAMILY_SHAPE = {"plazo_pago": "days", "telefono": "phone", "email": "email", "dia_entrega": "weekday"}

_DAYS = re.compile(r"\b(\d{1,3})\s*(?:dias|days|d)\b")
_PHONE = re.compile(r"(?<![\w@.])\+?\d[\d \-]{7,16}\d(?![\w@])")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_MONEY = re.compile(r"(?:(?:€|£|\$)\s*(\d+(?:[.,]\d+)?)|\b(\d+(?:[.,]\d+)?)\s*(?:euros?|eur|€|pounds?|libras?|£|"
                    r"dolares|dollars?|\$))")
_TIME = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm|h)\b|\b(\d{1,2})[:.](\d{2})\b")
_WEEKDAYS = ("lunes", "martes", "miercoles", "jueves", "viernes", "sabado", "domingo", "monday", "tuesday",
             "wednesday", "thursday", "friday", "saturday", "sunday")
# Days of the week said as a routine ("los martes", "every friday", "on mondays"), not one date ("el viernes").
_DAY_NAMES = "|".join(_WEEKDAYS)
_WEEKDAY = re.compile(rf"\b(?:los|cada|todos los|every|on)\s+({_DAY_NAMES})s?\b|\b({_DAY_NAMES})s\b|"
                      rf"(?<=\by\s)({_DAY_NAMES})\b|(?<=\band\s)({_DAY_NAMES})s?\b")
_SAME_DAY = {"monday": "lunes", "tuesday": "martes", "wednesday": "miercoles", "thursday": "jueves",
             "friday": "viernes", "saturday": "sabado", "sunday": "domingo"}
_SAID = {"miercoles": "miércoles", "sabado": "sábado"}

# A sentence that says something has changed (beyond the pipeline's corrections: "ahora", "no longer"...).
CHANGE = re.compile(
    r"\b(?:ahora|ya no|ya|now|no longer|anymore|any more|actually|en realidad|al final|a partir de|desde (?:el|este|"
    r"esta|hoy|ya)|from now on|from (?:this|next|today)|changed?|changes|cambiad[oa]|cambio|cambia|cambian|"
    r"switched|moved|mudad[oa]s?|trasladad[oa]s?|new|nuev[oa]s?|subido|bajado|sube|baja|raised|put (?:up|down)|"
    r"increased|lowered|went up|gone up|pasa(?:do|n)? a|instead|en vez de|en lugar de)\b")


def shapes(text: str) -> dict[str, set[str]]:
    """The shaped values in a text, by shape, each normalised so two wordings of one value compare equal."""
    low = fold(text)
    out: dict[str, set[str]] = {}
    emails = _EMAIL.findall(low)
    if emails:
        out["email"] = set(emails)
    rest = _EMAIL.sub(" ", low)
    phones = {re.sub(r"\D", "", m) for m in _PHONE.findall(rest)}
    phones = {p for p in phones if 9 <= len(p) <= 13}
    if phones:
        out["phone"] = phones
        rest = _PHONE.sub(" ", rest)
    days = set(_DAYS.findall(rest))
    if days:
        out["days"] = days
    money = {(a or b).replace(",", ".") for a, b in _MONEY.findall(rest)}
    if money:
        out["money"] = money
    weekdays = {_SAME_DAY.get(d, d) for d in _weekdays(rest)}
    if weekdays:
        out["weekday"] = {" ".join(sorted(weekdays))}
    times = {f"{int(h or h2) + (12 if ap == 'pm' and int(h) < 12 else 0)}:{m or m2 or '00'}"
             for h, m, ap, h2, m2 in _TIME.findall(_MONEY.sub(" ", _DAYS.sub(" ", rest)))}
    if times:
        out["time"] = times
    return out


def _weekdays(low: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in _WEEKDAY.finditer(low)]


def family_shape(attribute: str) -> str | None:
    """The shape of a rule family's values (plazo_pago: days), None for a note or a family without one."""
    return FAMILY_SHAPE.get(MEMBER_OF.get(attribute.split("__", 1)[0], ""))


def value_of(text: str, shape: str) -> str | None:
    """The text of the first value of a shape in a text, as a fact's value says it ("60 días", "miércoles")."""
    low = fold(text)
    if shape == "days":
        m = _DAYS.search(low)
        return f"{m.group(1)} días" if m else None
    if shape == "email":
        m = _EMAIL.search(low)
        return m.group() if m else None
    if shape == "phone":
        for m in _PHONE.finditer(_EMAIL.sub(" ", low)):
            digits = re.sub(r"\D", "", m.group())
            if 9 <= len(digits) <= 13:
                return m.group().strip()
        return None
    if shape == "weekday":
        days = [_SAID.get(d, d) for d in dict.fromkeys(_weekdays(low))]
        return " y ".join(days) if days else None
    return None

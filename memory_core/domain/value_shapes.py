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
FAMILY_SHAPE = {"plazo_pago": "days", "telefono": "phone", "email": "email", "dia_entrega": "weekday",
                "direccion": "address", "canal_preferido": "channel"}
# Shapes that say which thing they are: two notes with them need no other word in common to be about one thing.
IDENTIFYING = frozenset({"phone", "email", "address"})

_STREET = r"(?:calle|c/|avenida|avda|av|plaza|pza|paseo|ronda|camino|carretera|poligono|travesia|street|st|road|rd|" \
    r"lane|avenue|ave|square|way|drive|close|crescent)"
_ADDRESS = re.compile(rf"\b{_STREET}\b\.?[^,.;:\d]{{0,40}}?\d{{1,4}}\b|\b\d{{1,4}}\s+(?:[a-z]+\s+){{1,3}}{_STREET}\b",
                      re.IGNORECASE)
# How something is sent or asked for: a channel ("por email", "by whatsapp", "por fax").
_CHANNEL = re.compile(r"\b(?:por|by|via|through|en|on|over)\s+(?:el\s+|the\s+)?"
                      r"(e-?mail|correo(?: postal| electronico)?|mail|whats ?app|telefono|phone|fax|sms|post|carta|"
                      r"burofax)\b")
_DAYS = re.compile(r"\b(\d{1,3})\s*(?:dias|days|d)\b")
PHONE = re.compile(r"(?<![\w@.])\+?\d[\d \-]{7,16}\d(?![\w@])")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
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
_SAME_CHANNEL = {"mail": "email", "correo": "email", "correoelectronico": "email", "phone": "telefono",
                 "post": "correopostal", "carta": "correopostal"}
_SAID = {"miercoles": "miércoles", "sabado": "sábado"}

# The words that take back what was just said, in a message of at most AMEND_WORDS words (`takes_back`).
_AMEND = re.compile(r"^(?:no\s*[,.]?\s*)?(?:(?:espera|wait|hold on)\s*[,.]?\s*)?(?:perdona|perdon|disculpa|sorry|oops|"
                    r"my mistake|mi error|me equivoque|me equivoco|"
                    r"me he equivocado|quise decir|queria decir|i mean|i meant|actually|en realidad|correction|"
                    r"corrijo|rectifico)\b|\b(?:i got it wrong|got that wrong|me he equivocado|me equivoque|"
                    r"i misremembered|my mistake|mi error|me lie)\b")
AMEND_WORDS = 12


def takes_back(low: str) -> bool:
    """A folded message is a short one that takes back what was just said ("no perdona, es a 45", "sorry, my mistake,
    it's 30 days"), and asks nothing: the extractor reads the statement it makes about the talk's subject, and the
    pipeline replaces the number of the writer's last fact (learning/amendments.py)."""
    return bool(_AMEND.search(low)) and len(low.split()) <= AMEND_WORDS and "?" not in low

def shapes(text: str) -> dict[str, set[str]]:
    """The shaped values in a text, by shape, each normalised so two wordings of one value compare equal."""
    low = fold(text)
    out: dict[str, set[str]] = {}
    emails = EMAIL.findall(low)
    if emails:
        out["email"] = set(emails)
    rest = EMAIL.sub(" ", low)
    addresses = {" ".join(a.split()) for a in _ADDRESS.findall(rest)}
    if addresses:
        out["address"] = addresses
        rest = _ADDRESS.sub(" ", rest)
    phones = {re.sub(r"\D", "", m) for m in PHONE.findall(rest)}
    phones = {p for p in phones if 9 <= len(p) <= 13}
    if phones:
        out["phone"] = phones
        rest = PHONE.sub(" ", rest)
    channels = {_channel(c) for c in _CHANNEL.findall(rest)}
    if channels:
        out["channel"] = channels
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


def _channel(said: str) -> str:
    key = said.replace(" ", "").replace("-", "")
    return _SAME_CHANNEL.get(key, key)


def _weekdays(low: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in _WEEKDAY.finditer(low)]


def without_values(low: str) -> str:
    """A folded text without its shaped values: what is left says what they are about."""
    for regex in (EMAIL, _ADDRESS, PHONE, _MONEY, _DAYS, _CHANNEL, _WEEKDAY, _TIME):
        low = regex.sub(" ", low)
    return low


def family_shape(attribute: str) -> str | None:
    """The shape of a rule family's values (plazo_pago: days), None for a note or a family without one."""
    return FAMILY_SHAPE.get(MEMBER_OF.get(attribute.split("__", 1)[0], ""))


def value_of(text: str, shape: str, old: str = "") -> str | None:
    """The text of a value of a shape in a text, as a fact's value says it ("60 días", "miércoles"): the first one
    the `old` text does not say ("ya no por email, ahora por whatsapp": whatsapp), else the first."""
    said = shapes(old).get(shape, set())
    values = [(v, {_channel(v)} if shape == "channel" else shapes(v).get(shape, set())) for v in _values(text, shape)]
    return next((v for v, norm in values if norm and not norm <= said), values[0][0] if values else None)


def _values(text: str, shape: str) -> list[str]:
    low = fold(text)
    if shape == "days":
        return [f"{m.group(1)} días" for m in _DAYS.finditer(low)]
    if shape == "email":
        return [m.group() for m in EMAIL.finditer(low)]
    if shape == "phone":
        return [m.group().strip() for m in PHONE.finditer(EMAIL.sub(" ", low))
                if 9 <= len(re.sub(r"\D", "", m.group())) <= 13]
    if shape == "channel":
        return [m.group(1) for m in _CHANNEL.finditer(low)]
    if shape == "address":
        return [m.group().strip() for m in _ADDRESS.finditer(text)]
    if shape == "weekday":
        days = [_SAID.get(d, d) for d in dict.fromkeys(_weekdays(low))]
        return [" y ".join(days)] if days else []
    return []

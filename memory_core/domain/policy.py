"""Content policy before any write: secrets refused, special categories flagged, bank accounts found."""
from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from stdnum import luhn as stdnum_luhn
from stdnum.es import ccc as es_ccc
from stdnum.es import dni as es_dni
from stdnum.es import nie as es_nie
from stdnum.iso7064 import mod_97_10

log = logging.getLogger(__name__)

EXCLUSION_KINDS = ("secret", "special")


@dataclass(frozen=True)
class Exclusion:
    """One row of the exclusion list (the seeded table, or an org's own addition)."""
    kind: str  # secret | special
    name: str
    pattern: str  # Python regular expression, matched case-insensitively
    validator: str | None = None  # luhn | dni | None
    description: str = ""


@dataclass(frozen=True)
class PolicyVerdict:
    """What the text contains: the first secret and special rule that matched, and a bank account."""
    secret: str | None = None
    special: str | None = None
    bank_account: str | None = None  # normalised IBAN or 20-digit CCC

    @property
    def refused(self) -> bool:
        return self.secret is not None

    @property
    def clean(self) -> bool:
        return self.secret is None and self.special is None and self.bank_account is None


# --- validators -------------------------------------------------------------------------------

def luhn(text: str) -> bool:
    """A 13-19 digit card number whose Luhn checksum holds (separators ignored)."""
    digits = re.sub(r"\D", "", text)
    # Card numbers never start with 0 (that prefix is not issued to cards); zero-padded document
    # numbers do, and "0000..." passes Luhn trivially.
    return 13 <= len(digits) <= 19 and digits[0] != "0" and stdnum_luhn.is_valid(digits)


def dni(text: str) -> bool:
    """A Spanish DNI (8 digits + letter) or NIE (X/Y/Z + 7 digits + letter) with its mod-23 letter."""
    value = re.sub(r"[\s-]", "", text).upper()
    return es_dni.is_valid(value) or es_nie.is_valid(value)


VALIDATORS: dict[str, Callable[[str], bool]] = {"luhn": luhn, "dni": dni}


# --- bank accounts ----------------------------------------------------------------------------

# Lengths of the IBANs people in Spain meet most; other countries are tried at every group end.
IBAN_LENGTHS = {
    "ES": 24, "AD": 24, "PT": 25, "FR": 27, "MC": 27, "IT": 27, "DE": 22, "GB": 22, "IE": 22,
    "NL": 18, "BE": 16, "LU": 20, "AT": 20, "CH": 21, "LI": 21, "PL": 28, "SE": 24, "DK": 18,
    "FI": 18, "NO": 15, "GR": 27, "CZ": 24, "RO": 24, "HU": 28, "MT": 31, "CY": 28, "SI": 19,
    "SK": 24, "HR": 21, "BG": 22, "LT": 20, "LV": 21, "EE": 20, "IS": 26, "GI": 23,
}
_IBAN_START = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2})(\d{2})")
_CCC = re.compile(r"(?<![A-Za-z0-9])(?<!\d[ -])\d(?:[ -]?\d){19}(?![ -]?\d)")


def iban_valid(iban: str) -> bool:
    """The ISO 13616 mod-97 check on a compact IBAN of a plausible shape and length."""
    iban = iban.upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", iban):
        return False
    if iban[:2] in IBAN_LENGTHS and len(iban) != IBAN_LENGTHS[iban[:2]]:
        return False
    return mod_97_10.is_valid(iban[4:] + iban[:4])


def ccc_valid(digits: str) -> bool:
    """The two control digits of a 20-digit Spanish CCC (entidad, oficina, DC, cuenta)."""
    # An all-zero account "passes" the check, but it is no account.
    return bool(re.fullmatch(r"\d{20}", digits)) and int(digits) != 0 and es_ccc.is_valid(digits)


def _iban_candidates(text: str, start: int) -> Iterable[str]:
    """Compact prefixes of the alphanumerics from start, single spaces/dashes allowed, ending at a group end."""
    compact: list[str] = []
    i = start
    while i < len(text):
        ch = text[i]
        if ch.isascii() and ch.isalnum():
            compact.append(ch.upper())
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if not (nxt.isascii() and nxt.isalnum()):
                yield "".join(compact)
            i += 1
        elif ch in " -" and i + 1 < len(text) and text[i + 1].isascii() and text[i + 1].isalnum() and compact:
            i += 1
        else:
            break
        if len(compact) > 34:
            break


def find_bank_account(text: str) -> str | None:
    """The first valid IBAN (compact, upper case) or Spanish CCC (20 digits) in the text, if any."""
    for match in _IBAN_START.finditer(text):
        country = match.group(1).upper()
        for candidate in _iban_candidates(text, match.start()):
            if (country not in IBAN_LENGTHS or len(candidate) == IBAN_LENGTHS[country]) and iban_valid(candidate):
                return candidate
    for match in _CCC.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if ccc_valid(digits):
            return digits
    return None


# --- the check --------------------------------------------------------------------------------

@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        log.warning("policy pattern ignored, it does not compile: %r (%s)", pattern, exc)
        return None


def pattern_error(pattern: str) -> str | None:
    """Why a pattern cannot be used (for the console form), or None when it compiles."""
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        return str(exc)
    return None


def _matches(exclusion: Exclusion, text: str) -> bool:
    regex = _compiled(exclusion.pattern)
    if regex is None:
        return False
    validator = VALIDATORS.get(exclusion.validator) if exclusion.validator else None
    if exclusion.validator and validator is None:
        # A misconfigured row errs on the side of refusing: every match counts.
        log.warning("unknown policy validator %r on %s", exclusion.validator, exclusion.name)
    for match in regex.finditer(text):
        if validator is None or validator(match.group()):
            return True
    return False


def check_text(text: str, exclusions: Iterable[Exclusion]) -> PolicyVerdict:
    """Run the exclusion list over the text; report the first secret and special rule that matched."""
    secret = special = None
    for exclusion in exclusions:
        if exclusion.kind == "secret" and secret is None and _matches(exclusion, text):
            secret = exclusion.name
        elif exclusion.kind == "special" and special is None and _matches(exclusion, text):
            special = exclusion.name
    return PolicyVerdict(secret=secret, special=special, bank_account=find_bank_account(text))

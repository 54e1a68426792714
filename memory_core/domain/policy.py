"""Content policy before any write: secrets refused, special categories flagged, bank accounts found,
insults refused; `decide` is the one place that turns those findings and the gate's policy answers into
what may be written."""
from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from stdnum import luhn as stdnum_luhn
from stdnum.es import ccc as es_ccc
from stdnum.es import dni as es_dni
from stdnum.es import nie as es_nie
from stdnum.iso7064 import mod_97_10

from memory_core.domain.model_port import GateDecision
from memory_core.domain.text import fold
from memory_core.domain.value_shapes import EMAIL

log = logging.getLogger(__name__)

# A gate answer at or above this probability flags a policy question (insult, special, bank account).
POLICY_THRESHOLD = 0.5

# Judgements about a person that are never remembered, whatever the gate says. Whole words, folded.
INSULT_WORDS = (
    "idiota", "imbecil", "gilipollas", "subnormal", "estupido", "estupida", "cabron", "cabrona", "capullo",
    "capulla", "inutil", "payaso", "payasa", "sinverguenza", "caradura", "mentiroso", "mentirosa", "estafador",
    "estafadora", "ladron", "ladrona", "chorizo", "trepa", "vaga", "vago", "torpe", "imbeciles", "idiotas",
    "hijo de puta", "tonto del culo", "no tiene dos dedos de frente", "no das ni una",
    "idiot", "moron", "stupid", "asshole", "jerk", "crook", "scumbag", "bastard", "airhead", "pathetic",
    "liar", "useless", "clueless", "hasn't got a clue",
)
_INSULT_RE = re.compile(r"\b(" + "|".join(re.escape(w) for w in INSULT_WORDS) + r")\b")

# Someone other than the speaker: a special-category fact about them is never stored, even on request.
_THIRD_PERSON = re.compile(
    r"\b(mi|mis|su|sus|nuestr[oa]s?|tu|tus)\s+(hij[oa]s?|madre|padre|mujer|marido|espos[oa]|pareja|novi[oa]|"
    r"herman[oa]s?|soci[oa]|compañer[oa]|jef[ea]|emplead[oa]|cliente|abuel[oa]|ti[oa]|prim[oa]|suegr[oa]|amig[oa])\b"
    r"|\b(my|his|her|our|their)\s+(wife|husband|son|daughter|kids?|children|mother|mum|mom|father|dad|partner|"
    r"brother|sister|colleague|boss|employee|client|customer|friend|grand\w+)\b"
    r"|\b(el|la) de\b|\b(él|ella|he|she)\b")

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


def _found(exclusion: Exclusion, text: str) -> Iterator[re.Match[str]]:
    """The matches of one rule that pass its checksum (Luhn, DNI letter) when it has one."""
    regex = _compiled(exclusion.pattern)
    if regex is None:
        return
    validator = VALIDATORS.get(exclusion.validator) if exclusion.validator else None
    if exclusion.validator and validator is None:
        # A misconfigured row errs on the side of refusing: every match counts.
        log.warning("unknown policy validator %r on %s", exclusion.validator, exclusion.name)
    for match in regex.finditer(text):
        if validator is None or validator(match.group()):
            yield match


def _matches(exclusion: Exclusion, text: str) -> bool:
    return next(_found(exclusion, text), None) is not None


# --- redaction --------------------------------------------------------------------------------

# What a redacted secret reads as in the stored text: "[secret: card]". The label says what kind of
# secret was there, never any of it.
SECRET_LABELS = {
    "card_number": "card", "card_mention": "card", "password": "password", "credential_phrase": "password",
    "login_with": "password", "verification_code": "code", "unlock_code": "code", "api_key": "api key",
    "access_token": "api key", "national_id": "id number", "id_document": "id number",
    "social_security": "id number", "passport": "id number",
}
REDACTED = re.compile(r"\[secret: ([a-z ]{1,30})\]")


def redaction_mark(name: str) -> str:
    return f"[secret: {SECRET_LABELS.get(name, name.replace('_', ' ').lower()[:30])}]"


def redact(text: str, exclusions: Iterable[Exclusion]) -> str:
    """The text with every secret the exclusion list finds replaced by its mark. Marks already in the
    text are kept as they are, so redacting twice is redacting once."""
    secrets = [e for e in exclusions if e.kind == "secret"]
    if not text or not secrets:
        return text
    out, last = [], 0
    for mark in [*REDACTED.finditer(text), None]:
        end = mark.start() if mark else len(text)
        out.append(_redact_plain(text[last:end], secrets))
        if mark:
            out.append(mark.group())
            last = mark.end()
    return "".join(out)


def _redact_plain(text: str, secrets: list[Exclusion]) -> str:
    # Every rule's matches on the same text; overlapping ones become one mark, so nothing of a secret
    # two rules see differently survives. A checksum rule's name (card) labels the mark before a
    # rule that only reads the words around the value.
    spans = sorted((m.start(), m.end(), e.validator is None, e.name) for e in secrets for m in _found(e, text)
                   if m.end() > m.start())
    merged: list[list] = []
    for start, end, vague, name in spans:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if (vague, name) < (last[2], last[3]):
                last[2], last[3] = vague, name
        else:
            merged.append([start, end, vague, name])
    out, pos = [], 0
    for start, end, _, name in merged:
        out += [text[pos:start], redaction_mark(name)]
        pos = end
    return "".join(out) + text[pos:]


def check_text(text: str, exclusions: Iterable[Exclusion]) -> PolicyVerdict:
    """Run the exclusion list over the text; report the first secret and special rule that matched.
    A secret redacted at ingest still counts: the text held one."""
    marked = REDACTED.search(text)
    secret = marked.group(1).replace(" ", "_") if marked else None
    special = None
    for exclusion in exclusions:
        if exclusion.kind == "secret" and secret is None and _matches(exclusion, text):
            secret = exclusion.name
        elif exclusion.kind == "special" and special is None and _matches(exclusion, text):
            special = exclusion.name
    return PolicyVerdict(secret=secret, special=special, bank_account=find_bank_account(text))


# --- the decision -----------------------------------------------------------------------------

def insult_words(text: str) -> str | None:
    """The first judgement word about a person in the text, if any."""
    match = _INSULT_RE.search(fold(text))
    return match.group(1) if match else None


def about_someone_else(text: str, names: Iterable[str] = ()) -> bool:
    """The text speaks of an identifiable third person: a relative, a colleague, a named contact."""
    low = fold(text)
    return bool(_THIRD_PERSON.search(low)) or any(fold(n) in low for n in names if n)


REASONS = {
    "secret": "Contains a secret ({rule}): never remembered.",
    "insult": "Insults and judgements about a person are never remembered.",
    "special": "Special-category data (GDPR art. 9) is never learnt in the background.",
    "special_other": "Special-category data about someone else is never remembered, even when asked.",
}


@dataclass(frozen=True)
class Ruling:
    """What policy allows for one text: refused (with the policy and the reason), or what to write and how."""
    refused: str | None = None  # secret | insult | special, when nothing may be written
    reason: str = ""
    special: bool = False  # special-category data, allowed only explicitly and only for the person, privately
    bank: bool = False  # a bank account: facts about a customer or supplier are only ever proposed


# Banks by name, folded: Spain's and Britain's, and the app-only ones people pay through.
BANKS = ("la caixa", "caixabank", "bbva", "santander", "sabadell", "bankinter", "unicaja", "abanca", "kutxabank",
         "cajamar", "ibercaja", "openbank", "ing", "lloyds", "barclays", "hsbc", "natwest", "starling", "monzo",
         "revolut", "n26", "deutsche bank", "evo banco", "triodos")
_BANK_WORD = re.compile(r"\b(?:iban|swift|bic|ccc|cuenta|cuentas|account|accounts|bank|banks|banco|bancari[oa]s?|"
                        r"sort code|transferencias?|transfer|entidad|remittance)\b")
_PHONE_WORD = re.compile(r"\b(?:telefono|tlf|tfno|movil|numero|number|phone|mobile|whatsapp|fijo)\b")


# People and departments named after accounts, keeping the books and customer numbers: no bank account ("our new
# account manager", "the accounts email", "la que lleva las cuentas", "our customer account number").
_ACCOUNT_ROLES = re.compile(r"\b(?:account (?:manager|executive|rep|representative|director)s?|key accounts?|"
                            r"accounts? (?:department|team|e-?mail|inbox|address|payable|receivable|office)|"
                            r"(?:gestor|gestora|responsable|director|directora|ejecutivo|ejecutiva) de cuentas?|"
                            r"departamento de cuentas|accounts? (?:person|guy|lady|woman|man|girl)|"
                            # a customer number at a supplier: "our customer account number with Hargreaves is HT-5520"
                            r"(?:customer|client|trade|loyalty|online) accounts?(?: (?:number|no|ref|reference))?|"
                            r"(?:numero|cuenta) de cliente|"
                            # Who keeps the books: "la que lleva las cuentas allí es Lorena", "does their accounts".
                            r"(?:lleva|llevan|llevaba|llevo|llevar|lleve)(?: ahora| ya| tambien| todas)? "
                            r"(?:las|sus|nuestras) cuentas|"
                            r"(?:does|do|did|doing) (?:the|their|our|his|her) (?:accounts|books))\b")


def without_account_roles(low: str) -> str:
    """Folded text without the roles and departments named after accounts ("account manager", "gestor de cuentas")."""
    return _ACCOUNT_ROLES.sub(" ", low)


def not_a_bank_change(text: str) -> bool:
    """A new phone number, email or account manager, not a bank account: a phone word, an email address or an
    account role, no bank word besides, and no run of digits long enough for an account (the gate alone took "X ha
    cambiado de número, ahora es 644556677" and "X has a new account manager" for bank changes)."""
    low = fold(text)
    rest = without_account_roles(EMAIL.sub(" email ", low))
    runs = [re.sub(r"\D", "", r) for r in re.findall(r"\d[\d \-]*\d", low)]
    said = bool(_PHONE_WORD.search(rest)) or bool(EMAIL.search(low)) or rest != EMAIL.sub(" email ", low)
    return said and not _BANK_WORD.search(rest) and all(len(r) <= 13 for r in runs)


# A bank by name, as a word ("ing", not the "-ing" of a verb).
_BANK_NAMED = re.compile(r"\b(?:" + "|".join(re.escape(bank) for bank in BANKS) + r")\b")
# Something written like an account number, whether or not its check digits hold ("ES77 1234 0000 9999 8888 7777").
_ACCOUNT_SHAPE = re.compile(r"\b[a-z]{2}\d{2}(?:[ -]?[a-z0-9]{4}){3,}|\d(?:[ -]?\d){15,}")


def names_a_bank(text: str) -> bool:
    """Some word of banking (an account, a bank, a transfer, IBAN...), a bank by name or something written like an
    account number: without one, no account is changing whatever the gate's flag says ("Brightside Cleaning are
    going to invoice us monthly now and their new contact is Janet" is a term and a person)."""
    low = fold(text)
    return bool(_BANK_WORD.search(low) or _ACCOUNT_SHAPE.search(low) or _BANK_NAMED.search(low))


def decide(verdict: PolicyVerdict, text: str, gate: GateDecision | None = None, *, explicit: bool = False,
           names: Iterable[str] = ()) -> Ruling:
    """The one policy decision, for the background (`explicit=False`) and for "remember that..." alike.

    Called first with the exclusion list's verdict alone (a secret is refused before any model sees the
    text), then with the gate's policy answers. `names`: the contacts the text may be about."""
    if verdict.secret:
        return Ruling("secret", REASONS["secret"].format(rule=verdict.secret))
    if gate is None:
        return Ruling(special=verdict.special is not None, bank=verdict.bank_account is not None)
    if gate.insult >= POLICY_THRESHOLD or insult_words(text):
        return Ruling("insult", REASONS["insult"])
    bank = verdict.bank_account is not None or (gate.bank_account >= POLICY_THRESHOLD and names_a_bank(text) and
                                                not not_a_bank_change(text))
    if explicit:
        special = verdict.special is not None or gate.special >= POLICY_THRESHOLD
        if special and about_someone_else(text, names):
            return Ruling("special", REASONS["special_other"], special=True, bank=bank)
        return Ruling(special=special, bank=bank)
    if gate.special >= POLICY_THRESHOLD or (verdict.special and gate.passes):
        return Ruling("special", REASONS["special"], special=True, bank=bank)
    return Ruling(bank=bank)

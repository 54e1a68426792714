"""Small text helpers shared by the domain: folding (and squashing) for comparisons, the key a name is remembered by,
and which language a text is in."""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

LANGUAGES = ("es", "en")
# The organization setting (organizations.settings) that fixes the language of the memory block.
LANGUAGE_SETTING = "language"

# Short function words that are frequent in one language and rare in the other (folded, whole words).
_MARKERS = {
    "es": frozenset("""el la los las un una unos unas de del que y en es son por para con como pero muy mi mis
    tu tus su sus me te se lo le les yo nosotros esta este esto estoy estas tengo tiene hay ya no si tambien
    cuando donde porque gracias hola vale pues aqui hoy ayer manana semana""".split()),
    "en": frozenset("""the an of and in is are was were to for with but very my your his her our their me
    you he she we they it this that i'm i've it's don't can't have has had do does did not yes also when
    where because thanks hi hello okay so here today yesterday tomorrow week just""".split()),
}


def _fold_char(ch: str) -> str:
    # "İ".lower() is two characters: keeping the first keeps the offsets.
    return unicodedata.normalize("NFD", ch.lower()[0])[0]


class _Folds(dict):
    """Code point -> its folded character, for str.translate, filled as characters are first seen
    (up to FOLD_TABLE_LIMIT of them, so text of every script cannot grow it without bound)."""

    def __missing__(self, code: int) -> str:
        folded = _fold_char(chr(code))
        if len(self) < FOLD_TABLE_LIMIT:
            self[code] = folded
        return folded


FOLD_TABLE_LIMIT = 65536
_FOLDS = _Folds()


def fold(text: str) -> str:
    """Lower case without accents, one character for one (offsets in the fold are offsets in the text): how two
    spellings of one word are compared, everywhere."""
    if text.isascii():
        return text.lower()  # the same, at C speed: an ASCII letter has no accent and lowers to one letter
    return text.translate(_FOLDS)


LEGAL_SUFFIXES = (
    ("s", "l", "u"), ("s", "l", "l"), ("s", "l"), ("s", "a"), ("s", "coop"), ("s", "c"), ("c", "b"),
    ("sociedad", "limitada"), ("sociedad", "anonima"), ("slu",), ("sll",), ("sl",), ("sa",), ("scoop",),
    ("sc",), ("cb",), ("ltd",), ("inc",), ("llc",), ("gmbh",), ("plc",), ("srl",), ("sas",), ("bv",),
)


@lru_cache(maxsize=8192)
def name_tokens(name: str) -> tuple[str, ...]:
    """Folded word tokens of a name without its legal suffix ("Acme, S.L." -> ("acme",)).
    Cached: the same contact names are tokenised for every message of their org."""
    # An English possessive at its end is no part of the name ("Oakridge Dental's email", "Bright Paints' email").
    tokens = re.findall(r"[a-z0-9]+", re.sub(r"(?<=\w)['’]s?\s*$", "", fold(name).strip()))
    stripped = True
    while stripped and tokens:
        stripped = False
        for suffix in LEGAL_SUFFIXES:
            if len(tokens) > len(suffix) and tuple(tokens[-len(suffix):]) == suffix:
                tokens = tokens[: -len(suffix)]
                stripped = True
                break
    return tuple(tokens)


def normalise_name(name: str) -> str:
    return " ".join(name_tokens(name))



def squash(text: str, strip: str = " .") -> str:
    """The fold with runs of spaces made one and `strip` trimmed at both ends: how values are compared."""
    return " ".join(fold(text).split()).strip(strip)


def language_of(texts: Iterable[str], *, min_markers: int = 2) -> str | None:
    """"es" or "en" by counting each language's function words over the texts; None when too few to tell."""
    counts = {lang: 0 for lang in LANGUAGES}
    for text in texts:
        for word in re.findall(r"[\w']+", fold(text or "")):
            for lang, words in _MARKERS.items():
                if word in words:
                    counts[lang] += 1
    best = max(LANGUAGES, key=lambda lang: counts[lang])
    other = min(LANGUAGES, key=lambda lang: counts[lang])
    if counts[best] < min_markers or counts[best] == counts[other]:
        return None
    return best

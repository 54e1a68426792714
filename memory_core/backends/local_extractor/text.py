"""Text normalisation for the whole project: one `fold`, one `normalise_name`, sentences of a message."""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from memory_core.domain.text import fold  # noqa: E402,F401  (the project's one fold, used by every rule here)

LEGAL_SUFFIXES = (
    ("s", "l", "u"), ("s", "l", "l"), ("s", "l"), ("s", "a"), ("s", "coop"), ("s", "c"), ("c", "b"),
    ("sociedad", "limitada"), ("sociedad", "anonima"), ("slu",), ("sll",), ("sl",), ("sa",), ("scoop",),
    ("sc",), ("cb",), ("ltd",), ("inc",), ("llc",), ("gmbh",), ("plc",), ("srl",), ("sas",), ("bv",),
)


@lru_cache(maxsize=8192)
def name_tokens(name: str) -> tuple[str, ...]:
    """Folded word tokens of a name without its legal suffix ("Acme, S.L." -> ("acme",)).
    Cached: the same contact names are tokenised for every message of their org."""
    tokens = re.findall(r"[a-z0-9]+", fold(name))
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


def normalise_tax_id(value: str) -> str:
    compact = re.sub(r"[^A-Z0-9]", "", value.upper())
    # An intra-EU VAT number is the Spanish NIF with "ES" in front.
    return compact[2:] if compact.startswith("ES") and len(compact) == 11 else compact


def clean_value(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" \t,;:.-–—\"'«»“”")



ABBREVIATIONS = {"sr", "sra", "srta", "dr", "dra", "d", "dna", "avda", "av", "c", "pza", "pl", "n", "no", "num",
                  "tel", "telf", "st", "ave", "rd", "mr", "mrs", "ms", "inc", "ltd", "co", "etc", "vs", "ej",
                  "aprox", "ctra", "urb", "pol", "ind", "apdo", "dpto"}


def split_sentences(text: str) -> Iterator[str]:
    """Sentences and lines; a dot after an abbreviation ("Avda.", "S.L.") does not end a sentence."""
    for line in re.split(r"[\r\n]+", text):
        start = 0
        for m in re.finditer(r"[.!?;]+(?=\s|$)", line):
            before = re.search(r"(\S+)$", line[: m.start()])
            token = fold(before.group(1)).strip("(\"'") if before else ""
            if m.group() == "." and (token in ABBREVIATIONS or re.fullmatch(r"(?:[a-z]\.)+[a-z]|[a-z]", token)
                                     or re.fullmatch(r"[a-z]{1,4}\.[a-z]{1,4}", token)):
                continue
            yield line[start: m.end()].strip()
            start = m.end()
        if line[start:].strip():
            yield line[start:].strip()



NEGATED_BEFORE = re.compile(r"\b(?:no|ya no|nunca|jamas|not|never|no longer|doesn'?t|don'?t|won'?t|isn'?t)\s+"
                             r"(?:\w+\s+){0,2}$")


@dataclass(frozen=True)
class Sentence:
    text: str  # as written (curly apostrophes made straight)
    low: str  # fold(text): same offsets

    @classmethod
    def of(cls, text: str) -> Sentence:
        text = text.replace("’", "'").replace("‘", "'")
        return cls(text, fold(text))

    def negated(self, at: int) -> bool:
        return bool(NEGATED_BEFORE.search(self.low[:at]))


_ENGLISH = re.compile(r"\b(?:the|is|are|i|i'm|we|we're|my|our|and|with|to|of|always|never|don't|please|on|in|from|"
                      r"give|for|an|it|be|not|let|know|whenever|at|by|only|than|rather|just|they|their|pays?|"
                      r"has|have|lost|job|got|love|play|owes|prefers|delivers|gives)\b")
_SPANISH = re.compile(r"\b(?:el|la|los|las|que|de|del|y|en|es|un|una|por|para|con|mi|me|no|se|lo|al|mas|pero|"
                      r"paga|pagan|tengo|tiene|nos|le|les)\b")


def is_english(text: str) -> bool:
    """More English function words than Spanish ones (ties are Spanish, the project's first language)."""
    low = fold(text)
    return len(_ENGLISH.findall(low)) > len(_SPANISH.findall(low))

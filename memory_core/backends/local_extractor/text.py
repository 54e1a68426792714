"""Text normalisation for the whole project: one `fold`, one `normalise_name`, sentences of a message."""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# The project's one fold and one name key, used by every rule here.
from memory_core.domain.text import LEGAL_SUFFIXES, fold, name_tokens, normalise_name  # noqa: F401


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



# How people text (WhatsApp): short spellings, written out so every rule reads one spelling. Whole words only, in
# lower case as typed ("X" or "U" capitalised are initials); "x" between digits is a product ("3 x 4").
TEXTING = {
    "q": "que", "k": "que", "xq": "porque", "pq": "porque", "porq": "porque", "tb": "también", "tmb": "también",
    "tmbn": "también", "tambn": "también", "dnd": "donde", "x": "por", "xfa": "por favor", "xfavor": "por favor",
    "dps": "después", "dsp": "después", "mñn": "mañana", "mñna": "mañana", "mnn": "mañana", "xa": "para",
    "u": "you", "ur": "your", "pls": "please", "plz": "please", "tmrw": "tomorrow", "tmr": "tomorrow",
    "tmw": "tomorrow", "gonna": "going to", "wanna": "want to", "gotta": "got to", "thx": "thanks",
    "thnx": "thanks", "im": "I'm", "ive": "I've", "dont": "don't", "cant": "can't", "didnt": "didn't",
}
# Single letters only as typed in lower case ("X" and "U" are initials); "u" before an o-word is Spanish "or"; "k"
# only before a word ("talk later k?" is "ok").
_TEXTING = re.compile(r"(?<![\w'@./-])(?:(?i:" + "|".join(sorted((re.escape(k) for k in TEXTING if len(k) > 1),
                                                                    key=len, reverse=True)) +
                      r")|[qx]|k(?=\s+\w)|u(?!\s+h?o))(?![\w'@/-]|\.\w)")
# Laughter typed out ("jajaja", "jeje", "hahaha", "lol", "xD"): the talk around a fact, never part of it.
# Its spaces before and comma after go with it ("this class haha." -> "this class.", "Haha, I think" -> " I think").
LAUGHTER = re.compile(r"(?i)\s*(?<![\w'])(?:(?:j[aeij]){2,}j?|(?:h[ae]){2,}h?|lol|lmao|xd+)(?![\w']),?")


def untexted(text: str) -> str:
    """The message as the rules read it: texting spellings written out and typed laughter dropped."""
    text = LAUGHTER.sub("", text)
    return re.sub(r"[ \t]{2,}", " ", _TEXTING.sub(lambda m: _written_out(text, m), text))


def _written_out(text: str, m: re.Match) -> str:
    word = m.group()
    if word == "x" and re.search(r"\d\s*$", text[: m.start()]) and re.match(r"\s*\d", text[m.end():]):
        return word  # "3 x 4": a product
    if word in ("q", "k") and not text[: m.start()].strip(" \t\"'¡¿"):
        return word  # first in the line: "qué" asking ("q me queda por cobrar") as much as "que" telling
    out = TEXTING[word.lower()]
    return out[0].upper() + out[1:] if word[0].isupper() else out


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
                      r"has|have|lost|job|got|love|play|owes|prefers|delivers|gives|you|your|what|what's|how|who|where|"
                      r"when|why|do|does|did|this|here's|there's|it's|that's|was|were|been|will|would|could|"
                      r"gets|get|wants|needs|us|its|can|can't|should|now|still|off)\b")
_SPANISH = re.compile(r"\b(?:el|la|los|las|que|de|del|y|en|es|un|una|por|para|con|mi|me|no|se|lo|al|mas|pero|"
                      r"paga|pagan|tengo|tiene|nos|le|les)\b")


def is_english(text: str) -> bool:
    """More English function words than Spanish ones (ties are Spanish, the project's first language)."""
    low = fold(text)
    return len(_ENGLISH.findall(low)) > len(_SPANISH.findall(low))

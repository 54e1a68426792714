"""Which words of a message say what it is about, and whether a remembered text shares one of them.

A related memory needs more than one shared common word ("días", "time", "good"); one shared word that
is not common ("book", "Valencia", "pottery") is enough. Common words are the function words of both
languages and the everyday words of time, quantity and doing; words are compared by their shared start
("dance" and "dancing", "libro" and "libros").
"""
from __future__ import annotations

import re
from functools import lru_cache

from memory_core.domain.text import fold

# Folded, whole words: function words, question words and everyday words that say nothing alone.
COMMON = frozenset("""
a an and are as at be been being but by can could did do does doing done for from had has have having he her
hers him his how i if in into is it its me my of on or our she so than that the their them then there these they
this those to was we were what when where which who whom whose why will with would you your yours about after
again all also am any because before both each few more most much other some such no nor not only own same too
very just should may might must shall over under until while during through since per ever never still yet
day days week weeks weekend month months year years time times today yesterday tomorrow ago last next first
thing things stuff people person way lot lots kind sort bit part good great nice new old big little really
like make made get got go going went gone come came take took give gave know knew think thought want wanted
feel felt say said tell told see saw look use used find found keep kept let put mean well sure right back
ok okay yeah yes oh hey hi thanks thank please one two three something anything everything someone anyone
el la los las un una unos unas lo le les de del al y e o u en es son fue era ser estar esta este esto estos
estas ese esa eso esos esas aquel por para con sin sobre entre hasta desde que como cuando donde quien cual
cuanto cuanta cuantos cuantas cuales porque pero mas muy ya no si tambien mi mis tu tus su sus me te se nos
yo tu usted ustedes nosotros ellos ellas hay tengo tiene tienen tenemos hace hizo hacer hecho voy vamos va
ir fui fuimos dia dias semana semanas mes meses ano anos hoy ayer manana vez veces cosa cosas gente algo nada
todo todos toda todas otro otra otros otras mismo bien bueno buena nuevo nueva gran grande poco mucho mucha
muchos muchas decir dijo dice ver saber sabe quiero quiere puedo puede creo gracias hola vale
""".split())
_WORD = re.compile(r"[a-z0-9ñ]+")
MIN_WORD = 3


@lru_cache(maxsize=512)
def salient_words(text: str) -> frozenset[str]:
    """The folded words of a text that are not common, three letters or more."""
    return frozenset(w for w in _WORD.findall(fold(text or "")) if len(w) >= MIN_WORD and w not in COMMON)


def _same_word(a: str, b: str) -> bool:
    """One word in two forms: they share all of the shorter one but at most its last letter."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    need = max(MIN_WORD, len(short) - 1)
    return len(short) >= need and long_[:need] == short[:need]


def shares_salient_word(query_words: frozenset[str], text: str) -> bool:
    """Whether the text holds one of the query's salient words (in any form)."""
    if not query_words:
        return False
    words = salient_words(text)
    if query_words & words:
        return True
    # Two forms of one word share at least their first MIN_WORD letters (_same_word): only those pairs are compared.
    heads: dict[str, list[str]] = {}
    for w in words:
        heads.setdefault(w[:MIN_WORD], []).append(w)
    return any(_same_word(q, w) for q in query_words for w in heads.get(q[:MIN_WORD], ()))


# Two memories of one subject whose salient words overlap this much say the same thing ("I love my pottery
# class" and "I really love my pottery class!"): the block shows the first. Short values ("email", "60 días")
# are facts of different attributes that may well be equal, never duplicates.
DUPLICATE_OVERLAP = 0.8
DUPLICATE_MIN_WORDS = 3


def near_duplicate(a: tuple[str, frozenset[str]], b: tuple[str, frozenset[str]]) -> bool:
    """(subject, salient words) pairs of two memories that say nearly the same about the same subject."""
    if a[0] != b[0] or min(len(a[1]), len(b[1])) < DUPLICATE_MIN_WORDS:
        return False
    return len(a[1] & b[1]) / len(a[1] | b[1]) >= DUPLICATE_OVERLAP

"""The words that say something changed, in one place, for the three questions the pipeline asks of a text.

Each question takes the groups below that answer it, on folded text (`text.fold`: lower case, no accents):

- `CORRECTS`: the message corrects what was known ("ahora las lleva Lucía", "ya no trabajo allí", "from next month
  it's 60", "al final son 45", "turns out it's HT-5502"). A plain "now" is enough: the message is read as a change,
  and its facts may replace the closest fact of their subject (`ladder.CORRECTION_SIMILARITY`), and a note may take
  a stored name (the local extractor).
- `SAYS_CHANGED`: a note says in its own words that something changed ("have upped", "Mum's moved", "se ha
  trasladado", "otra vez"), more than a "now" of talk ("I'm now painting landscapes" replaces nothing by itself):
  only then may a note replace another note (`ladder.NOTE_CHANGE_SIMILARITY`).
- `MAY_CHANGE`: a sentence may be telling a change, loosely ("our new driver", "nowadays", "ya"): the ladder lets a
  fact of a one-valued family replace its old value, and strips these words before comparing two notes' topics.
"""
from __future__ import annotations

import re

from memory_core.domain.dates import MONTH_WORD

# "ahora", "now", "actually", "desde hace un mes": the state now, which may or may not be news.
_NOW = r"ahora|now|actually|en realidad|from now on|desde ahora|desde hace"
# "ya no", "no longer", "gone off oat milk".
_NO_LONGER = r"ya no|no longer|any ?more|not anymore|gone off"
# The writer takes back what they said.
_MISTAKE = (r"me equivoque|me he equivocado|rectifico|corrijo|correccion|correction|scrap that|olvida lo que|"
            r"forget what i|update")
_INSTEAD = r"instead|en vez de|en lugar de|al final|turns out|resulta que"
_CHANGED = r"(?:ha|han|he|hemos|has|have|'ve|'s) (?:cambiado|changed)|changed|cambiad[oa]|cambian? de|cambio|switched"
_MOVED = r"moved|mudad[oa]s?|trasladad[oa]s?|relocated"
# From when the new value holds: "from next month", "a partir de enero", "desde el lunes", "as of".
_FROM = (rf"a partir de|from (?:next|this|the \d|{MONTH_WORD})|starting (?:next|from|on|in|this)|as of|"
         rf"desde (?:este|esta|el proximo|la proxima|el mes|la semana|el lunes|{MONTH_WORD})")
_UP_DOWN = r"upped|raised|put (?:\w+ )?up|gone up|went up|subido|sube|bajado|baja a"
_LEFT = r"(?:has|have|had|ha|han|'s|s|'ve) left|se ha ido"
_BACK_TO = r"vuelto a|(?:been|started) \w+ing \w+ again"
# Said again of a note: "de nuevo", "otra vez", "again" (not a correction of the message by itself: "I went again").
_AGAIN = r"again|otra vez|de nuevo"
_HANDED_OVER = r"taking over|took over|replaced|sustituid[oa]"
# Loose signs of news: "new", "ya", "nowadays", "pasa a", "lowered".
_LATELY = (r"ya|new|nuev[oa]s?|changes?|cambia|cambian|baja|put (?:\w+ ){0,3}?(?:up|down)|increased|lowered|"
           r"pasa(?:do|n)? a|desde (?:el|hoy|ya)|from today|nowadays|these days|lately|hoy en dia|estos dias|"
           r"ultimamente|actualmente")


def _words(*groups: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(groups) + r")\b")


_TOLD = (_NO_LONGER, _MISTAKE, _INSTEAD, _CHANGED, _MOVED, _FROM, _UP_DOWN, _LEFT, _BACK_TO)
CORRECTS = _words(_NOW, *_TOLD)
SAYS_CHANGED = _words(*_TOLD, _AGAIN, _HANDED_OVER)
MAY_CHANGE = _words(_NOW, *_TOLD, _LATELY)

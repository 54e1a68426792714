"""Whether a unit is on a special category (GDPR art. 9: origin, religion, politics, health, sex life...) or
tells of an injury: never learnt in the background; and whether a doctor or physio named is one the business
only trades with."""
from __future__ import annotations

import re

from memory_core.backends.local_extractor.text import Sentence, fold
from memory_core.backends.local_extractor.topics import trades_with
from memory_core.domain.protected_topics import without_topic_mentions

# GDPR art. 9 categories (origin, religion, beliefs, politics, unions, health, sex life, genetics, biometrics):
# a generic note has no shape to check, so a clause on any of them is never kept, whatever the gate scored.
_SENSITIVE = re.compile(
    r"\b(?:origen|etni\w*|raza|racial|racis\w*|gitan[oa]s?|religi\w*|musulman\w*|islam\w*|judi[oa]s?|catolic\w*|"
    r"cristian\w*|evangelic\w*|ateo|atea|creyente|mezquita|sinagoga|iglesia|partido|afiliad\w*|sindica\w*|"
    r"ideolog\w*|vota\w*|izquierdas?|derechas?|comunista|enferm\w*|salud|medic\w*|diagnost\w*|cancer|diabet\w*|"
    r"depresi\w*|ansiedad|embaraz\w*|hospital\w*|terapia|psic\w*|psiqui\w*|vih|sida|discapacidad|minusval\w*|"
    r"homosexual\w*|gay|lesbiana|bisexual|transexual|orientacion sexual|genetic\w*|biometric\w*|huella dactilar|"
    r"origin|ethnic\w*|(?:my|your|his|her|their|our|of|by|and)\s+race|religio\w*|muslim|jewish|catholic|christian|church|mosque|union member\w*|"
    r"political|politics|votes?|voted|illness|sick|disease|health|medical|medication|diagnos\w*|pregnan\w*|"
    r"therapy|disabilit\w*|sexual\w*|genetic\w*|biometric\w*|"
    r"urgencias|alergi\w*|alergic[oa]s?|allerg\w*|esguince\w*|lesion\w*|fractur\w*|sprain\w*|injur\w*)\b")
# An injury or a pain, the writer's or anyone's: a body part hurt, broken, cut or operated on, within two words
# ("me he roto el brazo", "tengo la muñeca escayolada", "I sprained my ankle", "my knee hurts"). A back is a body
# part in English only as someone's ("my back", "a bad back"): "the back door is broken" is no injury.
_BODY = (r"(?:brazos?|piernas?|tobillos?|munecas?|rodillas?|espalda|manos?|dedos?|hombros?|caderas?|cuello|"
         r"costillas?|codos?|nariz|dientes?|muelas?|cabeza|arms?|legs?|ankles?|wrists?|knees?|"
         r"(?:el|los|un|mi|mis|del) pies?|"  # Spanish feet, not an English pie
         r"(?:my|his|her|their|your|bad|sore|lower) back|hands?|fingers?|thumbs?|toes?|feet|foot|shoulders?|hips?|"
         r"neck|ribs?|elbows?|nose|teeth|tooth)")
_HURT = (r"(?:rot[oa]s?|partid[oa]s?|torcid[oa]s?|cortad[oa]s?|dislocad[oa]s?|lesionad[oa]s?|quemad[oa]s?|"
         r"escayolad[oa]s?|vendad[oa]s?|hinchad[oa]s?|duele|duelen|dolor|operan|operad[oa]|operar(?:me|le)?|broke|"
         r"broken|sprained|twisted|cut|hurt|hurts|injured|fractured|dislocated|pulled|bruised|burnt|burned|sore|"
         r"aching|aches|swollen|operation|surgery|destroza\w*|machaca\w*|fastidia\w*|killing|wrecked|wrecking|"
         r"ruined|ruining|dolia|dolian)")
INJURY = re.compile(rf"\b(?:{_HURT}(?:\s+\w+){{0,2}}\s+{_BODY}|{_BODY}(?:\s+\w+){{0,2}}\s+{_HURT})\b")
# Sayings that name a body part and a hurt but tell of none: "I cut my teeth in retail", "you're pulling my leg".
_NO_INJURY = re.compile(r"\bcut (?:\w+ )?teeth\b|\bpull(?:s|ed|ing)? (?:\w+ )?legs?\b")
# Seeing a doctor tells of one's health too ("mañana tengo dentista", "a dentist appointment"); trading with
# one does not ("el fisio de enfrente es cliente nuestro", "la doctora Ruiz nos paga a 30 días").
_CARE = re.compile(r"\b(?:dentist\w*|odontolog\w*|doctor(?:a|as|es|'s)?|fisio\w*|physio\w*|ginecolog\w*|pediatra|"
                   r"oftalmolog\w*)\b")


def sensitive(s: Sentence) -> bool:
    """The unit is on a special category (GDPR art. 9): never learnt in the background. A protected word
    that only names a cause, a field or an event ("a charity race for mental health") does not count, nor
    does a doctor or physio the business trades with (see `topics.trades_with`)."""
    low = fold(without_topic_mentions(s.text))
    if _SENSITIVE.search(s.low) and _SENSITIVE.search(low):
        return True
    if injury(s):
        return True
    return bool(_CARE.search(s.low) and _CARE.search(low)) and not trades_with(s)


def injury(s: Sentence) -> bool:
    """The unit tells of an injury or a pain ("me he roto el brazo"): health, whoever's it is."""
    return bool(INJURY.search(s.low)) and not _NO_INJURY.search(s.low)


def care_trade(s: Sentence) -> bool:
    """A doctor, dentist or physio the business trades with, and no special category besides: a customer's
    or supplier's note, whatever the gate's special-category flag says of the care word."""
    return bool(_CARE.search(s.low)) and trades_with(s) and not sensitive(s)

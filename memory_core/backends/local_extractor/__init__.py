"""The local backend's extractor, by concern: `text` (fold, names, sentences), `clauses` (questions,
orders...), `names` (contacts named), `business` and `personal` rules, `subjects`, `fallback` (the generic fact),
with `speaker` (who a unit speaks of), `topics` (content words, topic families), `sensitive` (special categories),
`third_person` (the note's sentence) and `views` (views and values of the writer's), and `extractor` (LocalExtractor).

The date parser (`domain.dates`) and the attribute families (`domain.families`) are the domain's: the
write ladder, search and compaction use them too. Only `text` is imported eagerly: the rest of the project
uses it (one fold, one name normaliser) without loading the rules; the rest loads on first use."""
from __future__ import annotations

from importlib import import_module

from memory_core.backends.local_extractor.text import fold, normalise_name, normalise_tax_id

_LAZY = {"LocalExtractor": "extractor", "extract": "extractor", "MODEL": "extractor"}

__all__ = ["fold", "normalise_name", "normalise_tax_id", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

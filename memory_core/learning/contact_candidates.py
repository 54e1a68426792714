"""Which of an org's contacts a message may be about: the ones the extractor is shown. The same goes for the
names a writer has learnt about without a contact (learning/context_reads.py).

An org with at most ALL_CONTACTS_UP_TO contacts shows them all. A bigger one shows at most MAX_CONTACTS: those
whose tax ID is in the message, then those named by every significant word of their name or of an alias, then
the others sharing a word with the message, the rarer the words they share the earlier ("García" says more than
"Talleres" in an address book of workshops). Before, the first MAX_CONTACTS sharing any word, in name order,
were shown: with many "Talleres ..." the one the message named could be left out, and every message read the
whole address book to find them.

`ContactIndex` is built once per org and batch (the worker reads an org's contacts once a batch); a message's
candidates are then found from its own words, whatever the size of the address book.
"""
from __future__ import annotations

import heapq
import math
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from memory_core.domain.text import fold
from memory_core.learning.subjects import NAME_NOISE

# Orgs with at most this many contacts send them all to the extractor; bigger ones send only those the message
# names (by tax ID, name or alias, or a word of one), so a prompt never carries a whole address book.
ALL_CONTACTS_UP_TO = 50
MAX_CONTACTS = 40
POOL = 4
_WORD = re.compile(r"\w+")
_TAX_NOISE = re.compile(r"[\s\-.]")


@dataclass(frozen=True)
class ContactRow:
    """A contact as the extractor is shown it; plain values, so it outlives the transaction that read it."""
    id: uuid.UUID
    name: str
    kind: str
    tax_id: str | None
    aliases: tuple[str, ...] = ()


R = TypeVar("R", bound="Named")


def word_list(text: str) -> list[str]:
    """The folded words of `text`, in order."""
    return _WORD.findall(fold(text))


def words_of(text: str) -> set[str]:
    return set(word_list(text))


def significant(word: str) -> bool:
    """A (folded) word that tells one name from another (learning.subjects) of three letters or more: a
    two-letter word is shared by too many names to pick a contact by."""
    return len(word) > 2 and word not in NAME_NOISE


def _significant(name: str) -> frozenset[str]:
    return frozenset(filter(significant, words_of(name)))


def _compact_tax(value: str) -> str:
    return _TAX_NOISE.sub("", value.upper())


class Named(Protocol):
    name: str
    aliases: tuple[str, ...]
    tax_id: str | None


class ContactIndex(Generic[R]):
    """An org's contacts (in the order given: by name), or a writer's names, and, when there are more than
    ALL_CONTACTS_UP_TO, where each word and tax ID is."""

    def __init__(self, rows: Iterable[R]):
        self.rows: list[R] = list(rows)
        self.small = len(self.rows) <= ALL_CONTACTS_UP_TO
        self._by_word: dict[str, list[int]] = {}
        self._names: list[list[frozenset[str]]] = []  # each row's names (name, aliases) as significant words
        self._by_tax: dict[str, list[int]] = {}
        if self.small:
            return
        for i, row in enumerate(self.rows):
            names = [_significant(n) for n in (row.name, *row.aliases)]
            self._names.append([n for n in names if n])
            for word in set().union(*names):
                self._by_word.setdefault(word, []).append(i)
            tax = _compact_tax(row.tax_id) if row.tax_id else ""
            if tax:
                self._by_tax.setdefault(tax, []).append(i)
        self._tax_lengths = sorted({len(t) for t in self._by_tax})

    def candidates(self, text: str) -> list[R]:
        """The rows a fact in `text` may be about (see the module's docstring), the likeliest first."""
        if self.small:
            return self.rows
        words = words_of(text) & self._by_word.keys()
        score: dict[int, float] = {}
        for word in sorted(words):  # sorted: the same sums, so the same order, in every process
            having = self._by_word[word]
            rarity = math.log(1.0 + len(self.rows) / len(having))
            for i in having:
                score[i] = score.get(i, 0.0) + rarity
        taxed = self._taxed(text)
        # The best by score alone, a few times what is shown (a contact whose every word the message holds scores
        # all its words), then ordered: tax ID, whole name, score, name order.
        pool = taxed.union(heapq.nlargest(POOL * MAX_CONTACTS, score, key=lambda i: (score[i], -i)))
        ranked = sorted(pool, key=lambda i: (i not in taxed, not any(n <= words for n in self._names[i]),
                                             -score.get(i, 0.0), i))
        return [self.rows[i] for i in ranked[:MAX_CONTACTS]]

    def _taxed(self, text: str) -> set[int]:
        """Contacts whose tax ID is in the text, written with or without spaces, dashes and dots."""
        if not self._by_tax or not any(ch.isdigit() for ch in text):
            return set()
        compact = _compact_tax(text)
        out: set[int] = set()
        for length in self._tax_lengths:
            for start in range(len(compact) - length + 1):
                out.update(self._by_tax.get(compact[start:start + length], ()))
        return out

"""The memories of the subjects a conversation named, best first, read subject by subject in an index's order.

The related section offers, after the message's own hits, a few memories of each subject the conversation
named lately (context._related): the first PER_SUBJECT × subjects visible active memories of those subjects by
pinned, confidence, newest, id. The subjects are those the caller names (`subjects`) and the visible contacts
whose name, alias or tax ID holds one of the words `subject_words` ("Olano" is "Hierros Olano"), those holding
the most first, found by the same statement through the contacts' text index: one round trip for both. Written
as one query over the whole visibility rule, PostgreSQL fetched every visible row of the subjects to sort them (a
customer of a big org holds thousands). Here the rule is read as
its disjoint arms: the org's rows (access.memory_org_arm: shared in a readable area, or the principal's own
private ones) one subject at a time from ix_memories_subject_org, which is in that order, each cut at the
limit; and the person's personal rows of those subjects (memory_personal_arm: few) from their (owner, subject)
index. The outer query merges them and keeps the limit: the same rows in the same order as the one query
(migration t7_bigorg7_subject_indexes). Run with sorting priced out (planner.sorting_disabled), as the
planner, misled by row security's estimate, would otherwise sort every row of the subject.
"""
from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Integer, String, bindparam, cast, func, literal_column, select, true, union_all
from sqlalchemy.dialects.postgresql import ARRAY

from memory_core.adapters.array_param import ArrayParam
from memory_core.domain.access import contact_visible, memory_org_arm, memory_personal_arm, template
from memory_core.domain.models import Contact, Memory
from memory_core.domain.vocabulary import TEXT_SEARCH_CONFIG

SUBJECTS = "subjects"
WORDS = "subject_words"
PER_SUBJECT = "per_subject"


def order_keys():
    """The related section's order of a subject's memories: pinned, confidence, newest, then id."""
    return Memory.pinned.desc(), Memory.confidence.desc(), Memory.valid_from.desc(), Memory.id


def subjects_statement(form: tuple, columns: Sequence, max_contacts: int):
    """The first `per_subject` × subjects visible active memories of the `subjects` and of the visible contacts
    whose name, alias or tax ID holds one of the `subject_words` (at most `max_contacts` of them), in order_keys' order,
    for principals of one access form (access.shape; run with access.template_params and the three bound values)."""
    who = template(form)
    active = Memory.status == literal_column("'active'")
    keys = (Memory.pinned.label("k_pinned"), Memory.confidence.label("k_confidence"),
            Memory.valid_from.label("k_from"), Memory.id.label("k_id"))
    # The contacts' text index (name, tax ID, aliases), not a pattern tried on every name: an org may have thousands.
    # The words go as "w1 or w2 ...", which websearch_to_tsquery reads as alternatives and never rejects.
    words = func.websearch_to_tsquery(literal_column(f"'{TEXT_SEARCH_CONFIG}'::regconfig"),
                                      func.array_to_string(bindparam(WORDS, type_=ArrayParam("varchar")), " or "))
    contacts = (select(literal_column("'contact:'").op("||")(cast(Contact.id, String)))
                .where(contact_visible(who), Contact.search_tsv.op("@@")(words))
                .order_by(func.ts_rank(Contact.search_tsv, words).desc(), Contact.id)  # the most words first
                .limit(max_contacts))
    found = select(func.array_cat(cast(func.array(contacts.scalar_subquery()), ARRAY(String)),
                                  bindparam(SUBJECTS, type_=ArrayParam("varchar"))).label("subjects")).cte("named")
    # Cast, the subquery is an array: `= any((select ...))` would compare with each row the subquery returns.
    named = cast(select(found.c.subjects).scalar_subquery(), ARRAY(String))
    limit = bindparam(PER_SUBJECT, type_=Integer) * func.cardinality(named)
    arms = [select(*columns, *keys).where(memory_personal_arm(who), active, Memory.subject == func.any(named))
            .order_by(*order_keys()).limit(limit)]
    if who.has_org:
        subjects = select(func.unnest(named).label("subject")).subquery("each_subject")
        in_org = (select(*columns, *keys).where(memory_org_arm(who), active, Memory.subject == subjects.c.subject)
                  .order_by(*order_keys()).limit(limit).lateral("org_arm"))
        arms.append(select(*in_org.c).select_from(subjects).join(in_org, true()))
    merged = union_all(*arms).subquery("of_subjects")
    c = merged.c
    return (select(*[c[col.key] for col in columns])
            .order_by(c.k_pinned.desc(), c.k_confidence.desc(), c.k_from.desc(), c.k_id).limit(limit))

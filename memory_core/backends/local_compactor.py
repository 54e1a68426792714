"""The local compactor: the same operations a model returns (add, change, retire), chosen by rules.

Deterministic: the same points and messages always give the same operations. Each message that says
something becomes at most one point, in the section its wording points to; a restatement of a point
extends that point's sources instead of adding a twin; an open task becomes a decision ("Hecho: ...",
keeping its identifiers) when a later message says it is done and names it; an unresolved question is
retired when a later assistant message answers it with its words.
"""
from __future__ import annotations

import re
from typing import Any

from memory_core.domain.model_port import CompactMessage, Usage, critical_tokens
from memory_core.domain.text import squash

_PUNCT = " .!?¡¿"  # trimmed when two texts are compared

NAME = "local-compactor-1"
TRIVIAL = {"ok", "vale", "si", "sí", "no", "gracias", "muchas gracias", "perfecto", "genial", "hola", "buenas",
           "de acuerdo", "entendido", "thanks", "thank you", "yes", "great", "bien", "👍"}
_PREFERENCE = re.compile(r"\b(prefier\w*|prefer\w*|me gusta\w*|no me gusta\w*|siempre|nunca|mejor por|"
                         r"tut[eé]a\w*|trat\w* de usted|i like|i prefer|always|never)\b", re.I)
_DECISION = re.compile(r"\b(decid\w*|acord\w*|queda(mos)? en|confirm\w*|vamos a|lo dejamos|he creado|"
                       r"he enviado|creada|aprobad\w*|agreed|decided|we will)\b", re.I)
_TASK = re.compile(r"\b(tengo que|hay que|tenemos que|pendiente|recu[eé]rdame|necesito que|acu[eé]rdate|"
                   r"env[ií]a(le)?|manda(le)?|prepara|factura(le)?|haz(me)?|to ?do|remind me|need to)\b", re.I)
_DONE = re.compile(r"\b(hecho|hecha|ya est[aá]|listo|lista|enviad[oa]|terminad[oa]|completad[oa]|resuelt[oa]|"
                   r"done|sent|finished|ya (la |lo )?(he|hemos))\b", re.I)
_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(squash(text, _PUNCT))}


def _is_question(text: str) -> bool:
    return text.rstrip().endswith("?") or text.lstrip().startswith("¿")


def _section(msg: CompactMessage) -> str | None:
    text = msg.text
    if msg.role != "user":
        # What the assistant said matters when it carries identifiers or records a decision.
        if _DECISION.search(text):
            return "decisions"
        return "facts" if critical_tokens(text) else None
    if _PREFERENCE.search(text):
        return "preferences"
    if _is_question(text):
        return "unresolved_questions"
    if _DECISION.search(text):
        return "decisions"
    if _TASK.search(text):
        return "open_tasks"
    return "facts"


def _substantive(text: str) -> bool:
    folded = squash(text, _PUNCT)
    if not folded or folded in TRIVIAL:
        return False
    return bool(critical_tokens(text)) or len(_words(text)) >= 2


class LocalCompactor:
    name = NAME

    def compact(self, points: list[dict[str, Any]], messages: list[CompactMessage]) -> tuple[list[dict], Usage]:
        ops: list[dict] = []
        live = [dict(p) for p in points]  # points as they stand, including ones added in this batch
        pending: dict[str, dict] = {}  # temporary key -> add op, for restatements within the batch
        for i, msg in enumerate(messages):
            if msg.role not in ("user", "assistant") or not _substantive(msg.text):
                continue
            ops.extend(self._resolutions(live, msg))
            section = _section(msg)
            if section is None:
                continue
            if section == "unresolved_questions" and any(m.role == "assistant" for m in messages[i + 1:i + 2]):
                continue  # answered in the next turn: the answer is what is worth keeping
            same = next((p for p in live if p["section"] == section
                         and squash(p["text"], _PUNCT) == squash(msg.text, _PUNCT)), None)
            if same is not None:
                if same["id"] in pending:
                    pending[same["id"]]["message_ids"].append(msg.id)
                else:
                    ops.append({"op": "change", "id": same["id"], "text": same["text"], "message_ids": [msg.id]})
                continue
            add = {"op": "add", "section": section, "text": msg.text, "message_ids": [msg.id]}
            ops.append(add)
            key = f"new{len(pending)}"
            pending[key] = add
            live.append({"id": key, "section": section, "text": msg.text})
        return ops, Usage(purpose="compact", model=NAME)

    @staticmethod
    def _resolutions(live: list[dict], msg: CompactMessage) -> list[dict]:
        ops, words = [], _words(msg.text)
        for p in list(live):
            if p["id"].startswith("new"):
                continue
            done_task = p["section"] == "open_tasks" and _DONE.search(msg.text)
            answered = p["section"] == "unresolved_questions" and msg.role == "assistant"
            if not (done_task or answered) or len(words & _words(p["text"])) < 2:
                continue
            if done_task:
                ops.append({"op": "change", "id": p["id"], "section": "decisions", "text": f"Hecho: {p['text']}",
                            "message_ids": [msg.id]})
            else:
                ops.append({"op": "retire", "id": p["id"], "reason": "answered", "message_ids": [msg.id]})
            live.remove(p)
        return ops

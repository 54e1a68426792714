"""An example agent loop over memoria's HTTP API: a web chat adapter and a WhatsApp adapter that
ingest every message, assemble the memory block of each turn, remember what the person explicitly
asks for, report which memories the reply used, and let memoria compact long conversations.

It needs only the client module (no server code) and a running memoria:

    memoria up                                   # console on http://127.0.0.1:5000
    # in the console, as an owner: API keys -> create one; the page also shows your user id
    MEMORIA_API_KEY=mem_... MEMORIA_USER_ID=<uuid> MEMORIA_PHONE=+34600123456 python examples/agent.py

`story()` plays the Monday-web / Thursday-WhatsApp story: on Monday, at the desk, the person types
"Talleres García paga a 60 días ahora, no a 30." in the web chat; memoria's worker learns it in the
background. They link their WhatsApp number with a code. On Thursday, from the phone, they write
"Factura a Talleres García el cambio de frenos" and the memory block of that turn carries the 60 days,
though nobody repeated them and the two messages came through different channels.

The "model" here is a stand-in that answers from the memory block (there is no language model in
the loop, so the example runs offline); replace `reply_with` with your own model call.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from a checkout

from client.memoria_client import MemoriaClient, MemoryBlock  # noqa: E402

SYSTEM_PROMPT = "Eres Suma, el asistente de facturación. Responde breve y en el tono que prefiera la persona."
REMEMBER = re.compile(r"^\s*(recuerda que|acuérdate de que|remember that)\b", re.IGNORECASE)
LINK_ME = re.compile(r"\b(vincula(r)? (mi )?whatsapp|link my whatsapp)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{4,}")

# memoria's reasons are for operators (in English); the agent tells the person why in its own language.
REFUSALS = {"secret": "es un dato secreto.", "insult": "no guardo insultos ni juicios sobre personas.",
            "special": "es un dato sensible sobre otra persona."}


@dataclass
class Turn:
    """What one turn did, for printing and for tests."""
    channel: str
    text: str
    reply: str
    conversation_id: str | None = None
    block: MemoryBlock | None = None
    remembered: dict | None = None
    used: list[str] = field(default_factory=list)
    compaction: str | None = None


def reply_with(message: str, block: MemoryBlock | None, history: str) -> tuple[str, list[str]]:
    """Stand-in model: answer with the memory lines that share words with the message.

    Returns the reply and the ids of the memories it used (the agent reports them to memoria)."""
    if block is None or not block["text"]:
        return "Entendido.", []
    words = {w.casefold() for w in _WORD.findall(message)}
    lines = [ln.strip("- ") for ln in block["text"].splitlines()
             if "<<<" in ln and words & {w.casefold() for w in _WORD.findall(ln)}]
    if not lines:
        return "Entendido.", []
    # A real model reports the memories it relied on (mentioned, or passed to a tool); the stand-in
    # uses every memory of the block's related part, which is what matched the message.
    used = [i["memory_id"] for i in block["items"] if i["block"] in ("related", "profile")]
    return "Según lo que recuerdo: " + " · ".join(lines), used


class Agent:
    """The loop both adapters share: the message and its block, (remember), reply, the reply and what it used."""

    def __init__(self, client: MemoriaClient, model: Callable = reply_with):
        self.client, self.model = client, model

    def turn(self, *, channel: str, conversation: str, external_id: str, text: str,
             user_id: str | None = None, phone: str | None = None) -> Turn:
        who = {"user_id": user_id, "phone": phone}
        message = {"channel": channel, "conversation": conversation, "external_id": external_id, "text": text, **who}
        if REMEMBER.match(text) or (LINK_ME.search(text) and user_id):
            # Answered without a model, so without a memory block: the message is only stored.
            msg, block = self.client.ingest(role="user", **message), None
        else:
            # One call before the model: the message stored and its block assembled.
            turn = self.client.turn(**message)
            msg, block = turn["message"], turn["context"]
        if msg["reply"] is not None:  # a VINCULAR code: answered by memoria, before any model
            return Turn(channel, text, msg["reply"])
        conv_id = msg["conversation_id"]
        if REMEMBER.match(text):
            saved = self.client.remember(text=REMEMBER.sub("", text).strip(), conversation_id=conv_id,
                                         message_id=msg["message_id"], **who)
            reply = {"learnt": "Hecho, lo recordaré.", "merged": "Ya lo sabía.",
                     "proposed": "Tomo nota; queda pendiente de confirmar.",
                     "refused": "Eso no lo guardo: " + REFUSALS.get(saved.get("policy"), "no es algo que recuerde."),
                     "ignored": "No he encontrado nada concreto que recordar."}[saved["outcome"]]
            self._answer(channel, conversation, conv_id, reply, who)
            return Turn(channel, text, reply, conv_id, remembered=saved)
        if block is None:
            code = self.client.create_link_code(user_id)["code"]
            reply = f"Envía «VINCULAR {code}» desde tu WhatsApp en los próximos 10 minutos."
            self._answer(channel, conversation, conv_id, reply, who)
            return Turn(channel, text, reply, conv_id)
        history = self.client.history(conv_id, **who) if conv_id else None
        summary = history["summary"] if history else ""
        prompt = "\n\n".join(p for p in (SYSTEM_PROMPT, block["text"], summary) if p)
        prompt_tokens = len(prompt) // 4 + sum(len(m["text"]) // 4 + 4 for m in (history or {}).get("messages", []))
        reply, used = self.model(text, block, summary)
        # The reply, and the memories of the block it used, in one call.
        self._answer(channel, conversation, conv_id, reply, who,
                     used=(block["trace_id"], used) if used and block["trace_id"] else None)
        compaction = self.client.after_reply(conv_id, prompt_tokens=prompt_tokens, **who) if conv_id else None
        return Turn(channel, text, reply, conv_id, block, used=used, compaction=compaction)

    def _answer(self, channel, conversation, conv_id, reply, who, used=None) -> None:
        self.client.ingest(channel=channel, conversation=conversation, external_id=f"reply-{uuid.uuid4()}",
                           role="assistant", text=reply, used=used, **who)


class WebChatAdapter:
    """The chat balloon in the web app: the signed-in user is known, the chat has an id."""

    def __init__(self, agent: Agent):
        self.agent = agent

    def on_message(self, user_id: str, chat_id: str, text: str, message_id: str | None = None) -> Turn:
        return self.agent.turn(channel="web", conversation=f"web:{chat_id}",
                               external_id=message_id or f"web-{uuid.uuid4()}", text=text, user_id=user_id)


class WhatsAppAdapter:
    """A WhatsApp number: all the agent knows is the phone that wrote (memoria knows whose it is)."""

    def __init__(self, agent: Agent):
        self.agent = agent

    def on_message(self, phone: str, text: str, wamid: str | None = None) -> Turn:
        return self.agent.turn(channel="whatsapp", conversation=f"wa:{phone}",
                               external_id=wamid or f"wamid.{uuid.uuid4().hex}", text=text, phone=phone)


def wait_for_memory(client: MemoriaClient, needle: str, *, user_id: str, timeout: float = 60.0) -> bool:
    """Poll until the background worker has learnt something containing `needle`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        hits = client.search(needle, user_id=user_id, kinds=["memory"], limit=5)
        if any(needle.casefold() in (h["snippet"] + h["title"]).casefold() for h in hits):
            return True
        time.sleep(0.5)
    return False


def story(client: MemoriaClient, *, user_id: str, phone: str, link: bool = True,
          say: Callable[[str], None] = print) -> dict[str, Turn]:
    """Monday on the web, Thursday on WhatsApp, end to end over HTTP."""
    agent = Agent(client)
    web, whatsapp = WebChatAdapter(agent), WhatsAppAdapter(agent)
    chat = uuid.uuid4().hex[:8]
    turns: dict[str, Turn] = {}

    say("— Monday, at the desk (web chat)")
    turns["monday"] = web.on_message(user_id, chat, "Talleres García paga a 60 días ahora, no a 30.")
    say(f"  person: {turns['monday'].text}\n  agent:  {turns['monday'].reply}")
    turns["remember"] = web.on_message(user_id, chat, "Recuerda que prefiero que me tutees.")
    say(f"  person: {turns['remember'].text}\n  agent:  {turns['remember'].reply}"
        f"  [{turns['remember'].remembered['outcome']}]")
    learnt = wait_for_memory(client, "60 días", user_id=user_id)
    say(f"  (worker learnt the payment term in the background: {learnt})")

    if link:
        turns["link"] = web.on_message(user_id, chat, "Quiero vincular mi WhatsApp")
        say(f"  agent:  {turns['link'].reply}")
        code = re.search(r"VINCULAR (\w{6})", turns["link"].reply).group(1)
        turns["linked"] = whatsapp.on_message(phone, f"VINCULAR {code}")
        say(f"— From the phone\n  person: VINCULAR {code}\n  memoria: {turns['linked'].reply}")

    say("— Thursday, in the workshop (WhatsApp)")
    turns["thursday"] = whatsapp.on_message(phone, "Factura a Talleres García el cambio de frenos.")
    say(f"  person: {turns['thursday'].text}\n  agent:  {turns['thursday'].reply}")
    block = turns["thursday"].block
    say("  memory block of that turn:\n    " + (block["text"] if block else "").replace("\n", "\n    "))
    return turns


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("MEMORIA_URL", "http://127.0.0.1:5000"))
    parser.add_argument("--api-key", default=os.environ.get("MEMORIA_API_KEY"))
    parser.add_argument("--user-id", default=os.environ.get("MEMORIA_USER_ID"))
    parser.add_argument("--phone", default=os.environ.get("MEMORIA_PHONE"))
    parser.add_argument("--no-link", action="store_true", help="The phone is already linked to the user")
    args = parser.parse_args(argv)
    if not (args.api_key and args.user_id and args.phone):
        parser.error("give --api-key, --user-id and --phone (or MEMORIA_API_KEY, MEMORIA_USER_ID, MEMORIA_PHONE)")
    turns = story(MemoriaClient(args.url, args.api_key), user_id=args.user_id, phone=args.phone,
                  link=not args.no_link)
    block = turns["thursday"].block
    ok = block is not None and "60 días" in block["text"]
    print("\nThursday's invoice falls due at 60 days." if ok else "\nThursday's block does not carry the 60 days.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

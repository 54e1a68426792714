"""LoCoMo learning bench (`bench/locomo.py --learn`): what the real pipeline learns from conversations it
has never seen, and whether the memory block then answers questions about them.

One script on purpose (~420 lines): a run end to end (set up, ingest, drain, score, print) reads top to
bottom.

    MEMORIA_DATA_DIR=.memoria-locomo python bench/locomo.py --learn [--conversations 44,47] [--tune]
        [--backend local|openai] [--json]

Each conversation is one scratch org; each speaker is a user of it, and their turns are their own
messages (role user) in one conversation per session, ingested with the session's date as `sent_at`; the
other speaker's turns sit in that conversation as the assistant's (role assistant: the turn a message
answers, as an agent's question would be, never learnt from).
The outbox is drained by the worker code (`jobs.outbox.drain_batch`) with the chosen backend (`openai`
talks to OPENAI_BASE_URL with OPENAI_API_KEY). Then, printed:

- memories per user turn (every memory row the speakers' messages produced, versions included);
- pleasantry memories: memories whose source sentence is phatic by a check of its own (see `phatic`);
- supersessions, and how many replace a different topic (old and new share no content word);
- learning recall: the share of the sessions' `observation`s whose evidence turn produced a memory
  holding at least a third of the observation's key content words;
- per question category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5 adversarial is left
  out), the share of questions whose gold answer is in the block `assemble_context` builds for the
  asking speaker (the speaker the question names, else the first): at least 80% of the answer's
  content words, or its normalised date, appear in the block; with the block's mean size in tokens.

Held-out conversations are 44, 47, 48, 49 and 50 (the default); `--tune` runs 26, 30, 41, 42 and 43,
the only ones to look at while changing the pipeline. `--data` on a folder without them (the Spanish set,
evals/conversations_es, held out; its tune/ folder for tuning) runs every conversation in it. The bench refuses a database that holds anything
but its own scratch orgs, and removes them at the end unless `--keep`; `--reuse` measures the blocks
again on conversations a `--keep` run left (no ingest, no drain: for changes on the read side), and
`--dump FILE` writes each question with its block, and each observation with its evidence turns and
what they taught, as JSON lines.
"""
from __future__ import annotations

import datetime as dt
import inspect
import json
import re
import statistics
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

from sqlalchemy import or_, select, text

HELD_OUT = ("44", "47", "48", "49", "50")
TUNE = ("26", "30", "41", "42", "43")
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
ORG_PREFIX = "bench-locomo-learn-"
ANSWER_SHARE = 0.8
OBSERVATION_SHARE = 1 / 3

STOP = frozenset("""a an the and or but if so of to in on at by for with from as is are was were be been being am do does
did have has had having i me my mine we us our you your yours he him his she her hers it its they them their this
that these those there here what which who whom whose when where why how all any both each few more most other some
such no nor not only own same than too very can will just should would could may might must shall also about into
over after before again further then once up down out off under until while during through because since per
yeah yes yep oh ok okay really just like get got go going went make made lot lots thing things something one
de la el los las un una y o en por para con que es son""".split()) | frozenset(
    # Spanish function words: none is in a gold answer or an observation of the English held-out set ("uno",
    # "era" are: UNO the card game, "that era"), so the English figures stay as they were.
    """del al lo le les se su sus mi mis tu tus te nos os muy pero como mas ya este esta esto estos estas ese esa eso
    esos esas hay fue ser estar estan tiene tienen tambien entre sobre desde hasta cuando donde porque
    unos unas ella ellos ellas yo ni q xq tb si jaja jajaja""".split())
# Words that carry no fact on their own: greetings, thanks, agreement, praise, laughter.
PHATIC = frozenset("""hey hi hello hiya thanks thank thx ty cheers bye goodbye see soon wow awesome amazing great cool nice
glad happy sounds sound good love lovely congrats congratulations wonderful fantastic super sweet totally
absolutely definitely sure right true agree agreed haha hahaha lol omg yay aw aww sorry hear care take
catch talk later chat keep touch welcome luck best wishes hope well doing how you're good news incredible
beautiful gorgeous stunning proud inspiring impressive exciting excited""".split())
MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                      "september", "october", "november", "december"), 1)}
MESES = {m: i for i, m in enumerate(("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
                                     "septiembre", "octubre", "noviembre", "diciembre"), 1)}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


# ------------------------------------------------------------------------------------ the data

def session_date(raw: str | None) -> dt.datetime:
    """'1:56 pm on 8 May, 2023' -> an aware datetime (UTC)."""
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return dt.datetime.strptime((raw or "").strip(), fmt).replace(tzinfo=dt.timezone.utc)
        except ValueError:
            continue
    raise ValueError(f"unreadable session date {raw!r}")


def sessions_of(conv: dict) -> list[tuple[int, dt.datetime, list[dict]]]:
    found = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    return [(n, session_date(conv.get(f"session_{n}_date_time")), conv[f"session_{n}"]) for n in found]


def turn_text(turn: dict) -> str:
    text = turn.get("text", "")
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def observations_of(conv: dict) -> list[tuple[str, str, list[str]]]:
    """(speaker, observation, evidence dia_ids) of every session."""
    out = []
    for key, value in conv.items():
        if not re.fullmatch(r"session_\d+_observation", key) or not isinstance(value, dict):
            continue
        for speaker, items in value.items():
            for item in items:
                if not isinstance(item, list) or len(item) < 2:
                    continue
                evidence = item[1] if isinstance(item[1], list) else [item[1]]
                out.append((speaker, str(item[0]), [str(e) for e in evidence]))
    return out


# ------------------------------------------------------------------------------------ word checks

def fold(text: str) -> str:
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", str(text).casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", fold(text))


def unpossessed(word: str) -> str:
    """The word without a possessive (or contracted "is") 's: "melanie's" -> "melanie", "dog's" -> "dog"."""
    return word[:-2] if word.endswith("'s") and len(word) > 2 else word


def stem(word: str) -> str:
    """A crude stem, enough to match 'painting' with 'painted', 'agencies' with 'agency', 'dogs' and "dog's"
    with 'dog'."""
    word = unpossessed(word)
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:5] if len(word) > 5 else word


def content_words(text: str, names: frozenset[str] = frozenset()) -> list[str]:
    """The words that carry content; a speaker's name is none, possessive or not ("Melanie's painting": no
    memory of Melanie's own message says "Melanie's")."""
    return [w for w in words(text) if w not in STOP and unpossessed(w) not in names and len(w) > 1]


def phatic(sentence: str, names: frozenset[str]) -> bool:
    """A sentence that states nothing: no word left once stop words, the speakers' names and greeting,
    thanks, agreement and praise words are removed; or one word left in a sentence that opens with such
    a word ("Thanks for the support!")."""
    left = [w for w in content_words(sentence, names) if w not in PHATIC]
    first = words(sentence)[:1]
    return not left or (len(left) == 1 and bool(first) and first[0] in PHATIC)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def source_sentence(message: str, memory_text: str) -> str:
    """The sentence of the message that shares the most words with the memory."""
    mem = {stem(w) for w in words(memory_text)}
    return max(sentences(message) or [message], key=lambda s: len({stem(w) for w in words(s)} & mem))


def holds(memory_text: str, key: list[str], share: float) -> bool:
    if not key:
        return False
    mem = {stem(w) for w in words(memory_text)}
    return sum(1 for w in key if stem(w) in mem) / len(key) >= share


def answer_dates(answer: str) -> list[str]:
    """Normalised forms of the dates in a gold answer ('7 May 2023' -> '2023-05-07'; 'the sunday before
    25 May 2023' -> '2023-05-21'; 'May 2023' -> '2023-05'; '7 de mayo de 2023' -> '2023-05-07')."""
    low = fold(answer)
    found: list[str] = []
    for d, mon, y in re.findall(r"(\d{1,2})\s+(" + "|".join(MONTHS) + r"),?\s+(\d{4})", low):
        day = dt.date(int(y), MONTHS[mon], int(d))
        rel = re.search(r"(" + "|".join(WEEKDAYS) + r"|week|weekend)\s+(before|after)", low)
        if rel:
            sign = -1 if rel.group(2) == "before" else 1
            if rel.group(1) in WEEKDAYS:
                step = dt.timedelta(days=sign)
                probe = day + step
                while WEEKDAYS[probe.weekday()] != rel.group(1):
                    probe += step
                found.append(probe.isoformat())
            else:
                found += [(day + dt.timedelta(days=sign * k)).isoformat() for k in range(1, 8)]
        found.append(day.isoformat())
    for mon, d, y in re.findall(r"(" + "|".join(MONTHS) + r")\s+(\d{1,2}),?\s+(\d{4})", low):
        found.append(dt.date(int(y), MONTHS[mon], int(d)).isoformat())
    # Spanish: '7 de mayo de 2023' -> '2023-05-07'; 'mayo de 2023' -> '2023-05'; a span, 'del 6 al 10 de abril
    # de 2023', by either end.
    for d, mon, y in re.findall(r"(\d{1,2})\s+de\s+(" + "|".join(MESES) + r")(?:\s+de|,)?\s+(\d{4})", low):
        found.append(dt.date(int(y), MESES[mon], int(d)).isoformat())
    for d, mon, y in re.findall(r"\bdel?\s+(\d{1,2})\s+al\s+\d{1,2}\s+de\s+(" + "|".join(MESES) + r")(?:\s+de|,)?\s+(\d{4})",
                                low):
        found.append(dt.date(int(y), MESES[mon], int(d)).isoformat())
    if not found:
        for mon, y in re.findall(r"(" + "|".join(MONTHS) + r"),?\s+(\d{4})", low):
            found.append(f"{y}-{MONTHS[mon]:02d}")
        for mon, y in re.findall(r"(" + "|".join(MESES) + r")(?:\s+de|,)?\s+(\d{4})", low):
            found.append(f"{y}-{MESES[mon]:02d}")
    return found


def answered(block: str, answer: str) -> bool:
    """At least 80% of the answer's content words are in the block, or one of its normalised dates is."""
    dates = answer_dates(answer)
    if dates and any(d in block for d in dates):
        return True
    key = content_words(answer)
    if not key:
        return False
    present = {stem(w) for w in words(block)}
    return sum(1 for w in key if stem(w) in present) / len(key) >= ANSWER_SHARE


# ------------------------------------------------------------------------------------ the run

def check_scratch(db) -> None:
    """Refuse a database with anything but this bench's own scratch orgs (it writes and deletes rows)."""
    from memory_core.adapters.db import SYSTEM

    with db.unit_of_work(SYSTEM) as uow:
        foreign = uow.session.execute(text("select count(*) from organizations where name not like :p"),
                                      {"p": ORG_PREFIX + "%"}).scalar()
        users = uow.session.execute(text("select count(*) from users where email not like 'locomo-%@bench.invalid'")
                                    ).scalar()
    if foreign or users:
        raise SystemExit("this database holds data other than a previous locomo --learn run; point the bench at its "
                         "own MEMORIA_DATA_DIR (or DATABASE_URL): it writes and deletes rows")


def load_conversation(db, stem_name: str, conv: dict) -> dict:
    """The scratch org, its two users and every turn ingested with its session's date."""
    from memory_core.adapters.db import SYSTEM
    from memory_core.domain.models import Membership, Organization, User
    from memory_core.learning.ingest import ingest_message

    with_sent_at = "sent_at" in inspect.signature(ingest_message).parameters
    tag = uuid.uuid4().hex[:8]
    speakers = [conv["speaker_a"], conv["speaker_b"]]
    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org = Organization(name=f"{ORG_PREFIX}{stem_name}-{tag}")
        users = {name: User(email=f"locomo-{tag}-{i}@bench.invalid", name=name, locale="en")
                 for i, name in enumerate(speakers)}
        s.add_all([org, *users.values()])
        s.flush()
        for i, u in enumerate(users.values()):
            s.add(Membership(org_id=org.id, user_id=u.id, role="owner" if i == 0 else "admin"))
        s.flush()
        message_of: dict[str, uuid.UUID] = {}
        n_turns = 0
        for n, when, turns in sessions_of(conv):
            for i, turn in enumerate(turns):
                speaker = turn["speaker"]
                extra = {"sent_at": when + dt.timedelta(seconds=i)} if with_sent_at else {}
                result = ingest_message(s, channel="bench", conversation=f"{tag}-{users[speaker].id}-s{n}",
                                        external_id=f"{tag}:{turn['dia_id']}", org_id=org.id,
                                        user_id=users[speaker].id, phone=None, role="user",
                                        text=turn_text(turn), **extra)
                message_of[turn["dia_id"]] = result.message_id
                n_turns += 1
                for listener in speakers:
                    if listener != speaker:
                        # In the listener's conversation the speaker plays the assistant's part: what they
                        # said is the turn the listener's next message answers, never learnt from.
                        ingest_message(s, channel="bench", conversation=f"{tag}-{users[listener].id}-s{n}",
                                       external_id=f"{tag}:{turn['dia_id']}:heard", org_id=org.id,
                                       user_id=users[listener].id, phone=None, role="assistant",
                                       text=turn_text(turn), **extra)
        uow.commit()
    last = sessions_of(conv)[-1][1]
    return {"org_id": org.id, "users": {name: u.id for name, u in users.items()}, "message_of": message_of,
            "turns": n_turns, "now": last + dt.timedelta(days=1), "tag": tag}


def drain(db, backend) -> dict[str, int]:
    from jobs.outbox import drain_batch

    totals: Counter = Counter()
    while (counts := drain_batch(db, backend)) is not None:
        totals.update(counts)
    return dict(totals)


def remove(db, loaded: dict) -> None:
    from evals.scratch import remove_scratch

    remove_scratch(db, loaded["org_id"], loaded["users"].values())


def learnt(db, loaded: dict) -> tuple[list, dict[uuid.UUID, list[uuid.UUID]], dict[uuid.UUID, str]]:
    """Every memory row the speakers' messages produced, the messages each came from, and message texts."""
    from memory_core.adapters.db import SYSTEM
    from memory_core.domain.models import Memory, MemorySource, Message

    users = list(loaded["users"].values())
    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        rows = s.execute(select(Memory.id, Memory.subject, Memory.attribute, Memory.value, Memory.sentence,
                                Memory.status, Memory.superseded_by, Memory.category, Memory.event_date)
                         .where(or_(Memory.org_id == loaded["org_id"], Memory.owner_user_id.in_(users)))).all()
        sources: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)
        for memory_id, message_id in s.execute(select(MemorySource.memory_id, MemorySource.message_id)
                                               .where(MemorySource.memory_id.in_([r.id for r in rows]))):
            if message_id is not None:
                sources[memory_id].append(message_id)
        texts = dict(s.execute(select(Message.id, Message.text).where(Message.org_id == loaded["org_id"])).all())
    return rows, sources, texts


def asking_speaker(question: str, speakers: list[str]) -> str:
    """The speaker the question names first, by first name or its short form ("Mel" for Melanie), else the first."""
    for word in re.findall(r"\w+", question):
        for s in speakers:
            first, low = fold(s.split()[0]), fold(word)
            if low in (first, first + "s") or (word[0].isupper() and len(low) >= 3 and first.startswith(low)):
                return s
    return speakers[0]


def kept_conversation(db, stem_name: str, conv: dict) -> dict | None:
    """A conversation a previous `--keep` run left learnt (its scratch org, users and messages), else None."""
    from memory_core.adapters.db import SYSTEM

    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org = s.execute(text("select id, name from organizations where name like :p order by created_at desc limit 1"),
                        {"p": f"{ORG_PREFIX}{stem_name}-%"}).first()
        if org is None:
            return None
        tag = org.name.rsplit("-", 1)[1]
        users = dict(s.execute(text("select u.name, u.id from users u join memberships m on m.user_id = u.id "
                                    "where m.org_id = :o"), {"o": org.id}).all())
        message_of = {ext.split(":", 1)[1]: mid for mid, ext in s.execute(
            text("select id, external_id from messages where org_id = :o and external_id like :t and role = 'user'"),
            {"o": org.id, "t": f"{tag}:%"}).all()}
    last = sessions_of(conv)[-1][1]
    return {"org_id": org.id, "users": users, "message_of": message_of, "turns": len(message_of),
            "now": last + dt.timedelta(days=1), "tag": tag}


def measure(db, backend, stem_name: str, conv: dict, *, keep: bool = False, reuse: bool = False,
            dump: list | None = None) -> dict:
    from memory_core.adapters.db import SYSTEM
    from memory_core.domain.access import load_access
    from memory_core.reading.context import assemble_context

    t0 = time.perf_counter()
    loaded = kept_conversation(db, stem_name, conv) if reuse else None
    if loaded is not None:
        keep = True  # a reused conversation stays for the next run
    else:
        loaded = load_conversation(db, stem_name, conv)
    try:
        t1 = time.perf_counter()
        drained = drain(db, backend)
        t2 = time.perf_counter()
        rows, sources, texts = learnt(db, loaded)
        speakers = list(loaded["users"])
        names = frozenset(w for s in speakers for w in words(s)) | frozenset(
            w[:3] for s in speakers for w in words(s))  # "Mel" for Melanie
        by_id = {r.id: r for r in rows}
        pleasantries = []
        for r in rows:
            for message_id in sources.get(r.id, []):
                sentence = source_sentence(texts.get(message_id, ""), f"{r.value} {r.sentence}")
                if phatic(sentence, names):
                    pleasantries.append({"value": r.value, "source": sentence})
                    break
        superseded = [r for r in rows if r.superseded_by is not None]
        other_topic = []
        for old in superseded:
            new = by_id.get(old.superseded_by)
            if new is None:
                continue
            a = {stem(w) for w in content_words(f"{old.value} {old.sentence}", names)}
            b = {stem(w) for w in content_words(f"{new.value} {new.sentence}", names)}
            if not a & b:
                other_topic.append({"old": old.value, "new": new.value})
        memories_of_message: dict[uuid.UUID, list] = defaultdict(list)
        for r in rows:
            for message_id in sources.get(r.id, []):
                memories_of_message[message_id].append(r)
        observations = observations_of(conv)
        recalled = 0
        for speaker, observation, evidence in observations:
            key = content_words(observation, names)
            produced = [m for e in evidence for m in memories_of_message.get(loaded["message_of"].get(e), [])]
            hit = any(holds(f"{m.value} {m.sentence}", key, OBSERVATION_SHARE) for m in produced)
            recalled += hit
            if dump is not None:
                dump.append({"conversation": stem_name, "observation": observation, "speaker": speaker,
                             "evidence": evidence, "recalled": hit,
                             "turns": [texts.get(loaded["message_of"].get(e), "") for e in evidence],
                             "learnt": [f"{m.attribute}={m.value}" for m in produced]})
        per_category: dict[str, list[int]] = defaultdict(list)
        tokens = []
        accesses = {}
        with db.unit_of_work(SYSTEM) as uow:
            for name, uid in loaded["users"].items():
                accesses[name] = load_access(uow.session, loaded["org_id"], user_id=uid)

        def embed(texts_: list[str]) -> list[list[float]]:
            return backend.embed(texts_)[0]

        for q in conv["qa"]:
            if q.get("category") not in CATEGORIES or "answer" not in q:
                continue
            access = accesses[asking_speaker(str(q["question"]), speakers)]
            with db.unit_of_work(access.scope()) as uow:
                block = assemble_context(uow.session, access, None, str(q["question"]), now=loaded["now"],
                                         embed=embed, embed_model=backend.embed_model)
            tokens.append(block.tokens)
            hit = answered(block.text, str(q["answer"]))
            per_category[CATEGORIES[q["category"]]].append(int(hit))
            if dump is not None:
                dump.append({"conversation": stem_name, "category": CATEGORIES[q["category"]],
                             "question": str(q["question"]), "answer": str(q["answer"]),
                             "evidence": q.get("evidence", []), "hit": hit, "tokens": block.tokens,
                             "block": block.text})
        t3 = time.perf_counter()
        return {
            "conversation": stem_name, "turns": loaded["turns"], "memories": len(rows),
            "active": sum(1 for r in rows if r.status == "active"), "drained": drained,
            "pleasantries": pleasantries, "supersessions": len(superseded), "other_topic": other_topic,
            "observations": len(observations), "recalled": recalled, "per_category": dict(per_category),
            "tokens": tokens, "seconds": {"ingest": round(t1 - t0, 1), "drain": round(t2 - t1, 1),
                                          "questions": round(t3 - t2, 1)},
        }
    finally:
        if not keep:
            remove(db, loaded)


def summarise(results: list[dict], backend_name: str) -> dict:
    turns = sum(r["turns"] for r in results)
    per_category: dict[str, list[int]] = defaultdict(list)
    for r in results:
        for cat, hits in r["per_category"].items():
            per_category[cat] += hits
    every = [h for hits in per_category.values() for h in hits]
    tokens = [t for r in results for t in r["tokens"]]
    observations = sum(r["observations"] for r in results)
    return {
        "backend": backend_name,
        "conversations": [r["conversation"] for r in results],
        "user_turns": turns,
        "memories": sum(r["memories"] for r in results),
        "memories_per_user_turn": round(sum(r["memories"] for r in results) / max(1, turns), 4),
        "active_memories": sum(r["active"] for r in results),
        "pleasantry_memories": sum(len(r["pleasantries"]) for r in results),
        "supersessions": sum(r["supersessions"] for r in results),
        "supersessions_other_topic": sum(len(r["other_topic"]) for r in results),
        "learning_recall": round(sum(r["recalled"] for r in results) / max(1, observations), 4),
        "observations": observations,
        "block_answer_rate": {
            "non_adversarial": round(sum(every) / max(1, len(every)), 4),
            **{cat: round(sum(hits) / max(1, len(hits)), 4) for cat, hits in sorted(per_category.items())}},
        "questions": {"non_adversarial": len(every), **{c: len(h) for c, h in sorted(per_category.items())}},
        "block_tokens": {"mean": round(statistics.mean(tokens), 1) if tokens else 0,
                         "max": max(tokens, default=0)},
        "examples": {
            "pleasantries": [p for r in results for p in r["pleasantries"]][:5],
            "other_topic_supersessions": [o for r in results for o in r["other_topic"]][:5]},
        "seconds": {k: round(sum(r["seconds"][k] for r in results), 1) for k in ("ingest", "drain", "questions")},
    }


def default_conversations(data_dir: Path, *, tune: bool = False) -> list[str]:
    """The LoCoMo held-out (or `tune`) ids when the folder holds them; else every conversation in the folder
    (its file names without .json, e.g. evals/conversations_es: es1, es2, es3), in name order."""
    ids = list(TUNE if tune else HELD_OUT)
    if all((data_dir / f"{name}.json").is_file() for name in ids):
        return ids
    return sorted(p.stem for p in data_dir.glob("*.json"))


def run(data_dir: Path, conversations: list[str], backend_name: str, *, keep: bool = False, reuse: bool = False,
        dump: Path | None = None) -> dict:
    """`keep` leaves the learnt scratch orgs in the database; `reuse` measures the blocks again on a kept
    conversation without ingesting it anew (for changes on the read side); `dump` writes every question,
    its block and whether the answer is in it as JSON lines."""
    import dataclasses

    from memory_core.adapters.config import get_settings
    from memory_core.adapters.db import get_database
    from memory_core.adapters.migrate import migrate
    from memory_core.backends import get_backend

    settings = dataclasses.replace(get_settings(), backend=backend_name)
    migrate(settings)
    db = get_database()
    check_scratch(db)
    backend = get_backend(settings)
    if hasattr(backend, "warm_up"):
        backend.warm_up()
    results = []
    rows: list[dict] | None = [] if dump else None
    for name in conversations:
        path = data_dir / f"{name}.json"
        if not path.is_file():
            raise SystemExit(f"no LoCoMo conversation {name} at {path}")
        results.append(measure(db, backend, name, json.loads(path.read_text(encoding="utf-8")), keep=keep,
                               reuse=reuse, dump=rows))
    if dump:
        dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows or []), encoding="utf-8")
    return summarise(results, backend_name)

"""Scale bench: generate N orgs, users, contacts, memories and messages, then time assemble_context and
search and measure vector recall@10 against an exact scan of each principal's visible rows, and whether full
text finds a row by its rare word among the principal's many rows holding the query's common ones.

    MEMORIA_DATA_DIR=.memoria-bench python bench/scale.py --orgs 10000 --memories 1000000 --messages 1000000
    python bench/scale.py --orgs 1000 --memories 100000 --messages 100000 --queries 200
    python bench/scale.py --skip-load ...   # measure again on what is already loaded
    python bench/scale.py --orgs 200 --memories 60000 --messages 60000 --big-share 0.84   # a 50,000-memory org

Measured twice by default (--org-indexes both): with the one HNSW/GIN index of the whole table, then
after jobs/org_indexes.py gave the big org its own partial indexes; the last lines print the big org's
principal against a typical one, p50/p95 and recall@10, both passes side by side.

Run it against its own data dir (or DATABASE_URL): it writes millions of rows. Loading uses COPY as
the owner role; the HNSW and GIN indexes are dropped before the load and rebuilt after it (building a
graph over loaded vectors is much faster than inserting into one). Vectors are real local embeddings
of a pool of generated Spanish sentences plus a little noise per row, so neighbourhoods look like
real ones. One org ("big") holds --big-share of all rows, so the bench also exercises the iterative
HNSW path that a principal with more than EXACT_SCAN_MAX candidates takes.

Measurements run as the restricted app role with each principal's RLS scope, like the app. Each
principal is timed once (assemble_context, then search), all of them before the recall pass. The measuring
process is set up as a served one is (`app.served_app`): its heap frozen out of the garbage collector once loaded,
and WARM_TURNS untimed turns of other typical principals and one of each of the big org's principals first, so
that a statement compiled the first time a process runs it (a big principal's reads have shapes of their own) is
not timed as a principal's turn (a long-running server has compiled them all). A typical principal's timed turn is
its first, so it includes counting its rows (reading/principal_size.py); a big principal's, which is measured
several times, is counted in its untimed turn, as a served process counts it once a minute.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg  # noqa: E402
from pgvector.psycopg import register_vector  # noqa: E402
from sqlalchemy import func, make_url, select, text  # noqa: E402

from bench.percentiles import pct  # noqa: E402
from jobs.org_indexes import refresh_org_indexes  # noqa: E402
from memory_core.adapters.db import SYSTEM, get_database, resolve_urls  # noqa: E402
from memory_core.adapters.heap import freeze_heap  # noqa: E402
from memory_core.adapters.migrate import migrate  # noqa: E402
from memory_core.backends.local_embedder import LocalEmbedder  # noqa: E402
from memory_core.domain.access import Access, load_access, memory_visible, message_visible  # noqa: E402
from memory_core.domain.models import Memory, Message  # noqa: E402
from memory_core.reading import org_indexes  # noqa: E402
from memory_core.reading.context import assemble_context  # noqa: E402
from memory_core.reading.search import CONFIG, EXACT_SCAN_MAX, retrieve, search  # noqa: E402

WARM_TURNS = 5  # untimed turns of other principals before the timed ones

SUBJECTS = ["Acme", "Transportes García", "mi jefa", "la proveedora de papel", "el cliente Pérez", "nuestra empresa",
            "Sara", "el gestor", "Construcciones Ruiz", "la asesoría", "mi hermano Luis", "el almacén de Sevilla",
            "Bodegas Valdecielo", "la clínica dental", "Iberluz", "el taller"]
VERBS = ["paga a", "prefiere", "entrega en", "factura cada", "llama los", "cobra a", "trabaja con", "cierra en",
         "tiene la reunión el", "quiere recibir", "no acepta", "cambió su cuenta a", "pide presupuesto de",
         "envía los pedidos por"]
OBJECTS = ["60 días", "correo electrónico", "Madrid", "fin de mes", "lunes por la mañana", "30 días fecha factura",
           "transferencia bancaria", "agosto", "WhatsApp", "pedidos de más de 500 euros", "un IBAN nuevo",
           "presupuestos por escrito", "mensajero urgente", "la reforma del local", "tóner y papel"]
TAILS = ["", " desde enero", ", según me dijo ayer", " y lo confirma por email", " salvo en verano",
         ", eso me comentó Marta", " a partir del próximo trimestre"]

INDEXES = {
    "ix_memories_embedding": "create index ix_memories_embedding on memories using hnsw (embedding vector_cosine_ops)",
    "ix_messages_embedding": "create index ix_messages_embedding on messages using hnsw (embedding vector_cosine_ops)",
    "ix_memories_tsv": "create index ix_memories_tsv on memories using gin (search_tsv)",
    "ix_messages_tsv": "create index ix_messages_tsv on messages using gin (search_tsv)",
    "ix_memories_sentence_trgm": "create index ix_memories_sentence_trgm on memories using gin (sentence gin_trgm_ops)",
    "ix_messages_text_trgm": "create index ix_messages_text_trgm on messages using gin (text gin_trgm_ops)",
}
MODEL = "scale-bench"
NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc)


def pool_sentences(n: int, rng: random.Random) -> list[str]:
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen[f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}"] = None
    return list(seen)


def noisy(pool: np.ndarray, idx: np.ndarray, rng: np.random.Generator, noise: float = 0.45) -> np.ndarray:
    """Pool vectors plus a random direction of the given length, renormalised (cosine to the pool ~0.9)."""
    n = rng.normal(size=(len(idx), pool.shape[1])).astype(np.float32)
    n *= noise / np.linalg.norm(n, axis=1, keepdims=True)
    v = pool[idx] + n
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def generate(args, sentences: list[str], pool: np.ndarray) -> dict:
    """Write the whole data set with COPY, indexes dropped during the load and rebuilt after."""
    rng = np.random.default_rng(args.seed)
    prng = random.Random(args.seed)
    owner_url = _libpq(resolve_urls().owner)
    t0 = time.perf_counter()
    timings = {}
    with psycopg.connect(owner_url, autocommit=True) as conn:
        register_vector(conn)
        foreign = conn.execute("select count(*) from organizations where name <> 'big' and name !~ '^org [0-9]+$'")\
            .fetchone()[0]
        if foreign:
            raise SystemExit("this database holds data other than a previous scale run; point the bench at its "
                             "own MEMORIA_DATA_DIR or DATABASE_URL (it empties the tables it loads)")
        conn.execute("truncate organizations, users cascade")
        for name in INDEXES:
            conn.execute(f"drop index if exists {name}")
        orgs = [uuid.uuid4() for _ in range(args.orgs)]
        users = {o: [uuid.uuid4() for _ in range(args.users_per_org)] for o in orgs}
        contacts = {o: [uuid.uuid4() for _ in range(args.contacts_per_org)] for o in orgs}
        convs = {u: uuid.uuid4() for o in orgs for u in users[o]}
        with conn.cursor() as cur:
            with cur.copy("copy organizations (id, name) from stdin") as cp:
                for i, o in enumerate(orgs):
                    cp.write_row((o, "big" if i == 0 else f"org {i}"))
            with cur.copy("copy users (id, email, name) from stdin") as cp:
                for o in orgs:
                    for j, u in enumerate(users[o]):
                        cp.write_row((u, f"{u.hex}@scale.invalid", f"User {j}"))
            with cur.copy("copy memberships (org_id, user_id, role, permissions) from stdin") as cp:
                for o in orgs:
                    for j, u in enumerate(users[o]):
                        # owner, a member who reads contacts, members who read only "general"
                        role = "owner" if j == 0 else "member"
                        perms = '{"contacts": "read"}' if j == 1 else "{}"
                        cp.write_row((o, u, role, perms))
            with cur.copy("copy contacts (id, org_id, name, tax_id, kind) from stdin") as cp:
                for o in orgs:
                    for j, c in enumerate(contacts[o]):
                        cp.write_row((c, o, f"{prng.choice(SUBJECTS)} {j}", f"B{prng.randrange(10**7, 10**8)}",
                                      "customer" if j % 3 else "supplier"))
            with cur.copy("copy conversations (id, channel, external_id, org_id, user_id) from stdin") as cp:
                for o in orgs:
                    for u in users[o]:
                        cp.write_row((convs[u], "web", f"c-{convs[u].hex}", o, u))
        timings["small_tables_s"] = round(time.perf_counter() - t0, 1)

        def org_of_rows(total: int) -> np.ndarray:
            big = int(total * args.big_share)
            rest = rng.integers(1, len(orgs), size=total - big) if len(orgs) > 1 else np.zeros(total - big, int)
            return np.concatenate([np.zeros(big, dtype=np.int64), rest])

        def rows_of(total: int):
            """(n, org, user, roll in [0, 1), sentence, vector) for `total` synthetic rows, drawn 20,000 at a time."""
            owners = org_of_rows(total)
            for start in range(0, total, 20_000):
                chunk = owners[start:start + 20_000]
                idx = rng.integers(0, len(sentences), size=len(chunk))
                vecs = noisy(pool, idx, rng)
                roll = rng.random(len(chunk))
                for k, (oi, si) in enumerate(zip(chunk, idx)):
                    o = orgs[oi]
                    yield start + k, o, users[o][int(roll[k] * 1000) % len(users[o])], roll[k], sentences[si], vecs[k]

        t1 = time.perf_counter()
        with conn.cursor() as cur, cur.copy(
                "copy memories (org_id, level, owner_user_id, area, category, subject, attribute, value, sentence, "
                "confidence, embedding, embed_model, valid_from) from stdin (format binary)") as cp:
            cp.set_types(["uuid", "varchar", "uuid", "varchar", "varchar", "varchar", "varchar", "text", "text",
                          "float8", "vector", "varchar", "timestamptz"])
            for n, o, u, r, s, vec in rows_of(args.memories):
                if r < 0.25:
                    row = (None, "personal", u, "general", "preference", "self")
                elif r < 0.40:
                    row = (o, "private", u, "general", "company", "org")
                elif r < 0.65:
                    row = (o, "shared", None, "general", "company", "org")
                else:
                    c = contacts[o][int(r * 997) % len(contacts[o])]
                    row = (o, "shared", None, "contacts", "customer", f"contact:{c}")
                age = dt.timedelta(days=int(r * 10_000) % 700)
                cp.write_row((*row, f"a{n}", s.rsplit(" ", 2)[-1], s, 0.5 + (r * 7) % 0.5, vec, MODEL, NOW - age))
        timings["memories_copy_s"] = round(time.perf_counter() - t1, 1)

        t2 = time.perf_counter()
        with conn.cursor() as cur, cur.copy(
                "copy messages (conversation_id, channel, external_id, org_id, user_id, visibility, area, role, "
                "text, created_at, embedding, embed_model) from stdin (format binary)") as cp:
            cp.set_types(["uuid", "varchar", "varchar", "uuid", "uuid", "varchar", "varchar", "varchar", "text",
                          "timestamptz", "vector", "varchar"])
            for n, o, u, r, s, vec in rows_of(args.messages):
                cp.write_row((convs[u], "web", f"m{n}", o, u, "shared_in_org" if r < 0.2 else "private_in_org",
                              "general", "user", s, NOW - dt.timedelta(minutes=n), vec, MODEL))
        timings["messages_copy_s"] = round(time.perf_counter() - t2, 1)

        t3 = time.perf_counter()
        conn.execute("select set_config('maintenance_work_mem', %s, false)", (args.maintenance_work_mem,))
        conn.execute("set max_parallel_maintenance_workers = 1")
        for name, ddl in INDEXES.items():
            ti = time.perf_counter()
            conn.execute(ddl)
            timings[f"{name}_s"] = round(time.perf_counter() - ti, 1)
        conn.execute("analyze")
        timings["indexes_s"] = round(time.perf_counter() - t3, 1)
    timings["total_s"] = round(time.perf_counter() - t0, 1)
    return timings


def _exact_top(session, access, model, visible, vector: np.ndarray, k: int = 10) -> list[uuid.UUID]:
    """Ground truth, independent of the search code: every visible row's vector, ranked in numpy."""
    where = [visible(access), model.embedding.isnot(None)]
    if model is Memory:
        where.append(Memory.status == "active")
    else:
        where += [Message.deleted_at.is_(None), Message.text != ""]
    rows = session.execute(select(model.id, model.embedding).where(*where)).all()
    if not rows:
        return []
    m = np.asarray([r.embedding for r in rows], dtype=np.float32)
    order = np.argsort(-(m @ vector))[:k]
    return [rows[i].id for i in order]


_HOLDS = "search_tsv @@ cast(%s as tsquery)"  # a row holds this stemmed word (_as_query), as it is


def _as_query(lexeme: str) -> str:
    """A stemmed word as tsquery text, taken as it is (quoted as search._quoted_lexeme quotes it)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _full_text_top_10(session, access, query: str, vector: np.ndarray) -> list[uuid.UUID]:
    """The full-text retriever's top 10 memories, with a vector as in a turn (so the principal is counted: big or
    small)."""
    return [f.id for f in retrieve(session, access, query, kinds=["memory"], per_retriever=10, vector=vector.tolist(),
                                   retrievers=["fts", "vector"])["fts"]]


def _rare_word_found(session, owner, access, query: str, vector: np.ndarray, rng: random.Random) -> bool | None:
    """Full text with a rare word: of the memories the principal sees nearest the query, one's rarest word (fewest
    rows in the whole table, counted up to 50 on the owner's connection `owner`), added to the query's common words.
    Is a row holding it in the full-text retriever's top 10?"""
    near = retrieve(session, access, query, kinds=["memory"], per_retriever=10, vector=vector.tolist(),
                    retrievers=["vector"])["vector"]
    if not near:
        return None
    lexemes = owner.execute("select unnest(tsvector_to_array(search_tsv)) from memories where id = %s",
                            [rng.choice(near).id]).fetchall()
    held = {lex: owner.execute(f"select count(*) from (select 1 from memories where {_HOLDS} limit 50) x",
                               [_as_query(lex)]).fetchone()[0] for (lex,) in lexemes}
    rare = min(sorted(held), key=held.get, default=None)
    if rare is None or held[rare] >= 50:
        return None  # the row holds no rare word
    words = query.split()
    words.insert(rng.randrange(len(words) + 1), rare)
    query = " ".join(words)
    if rare not in session.scalar(select(func.tsvector_to_array(func.to_tsvector(CONFIG, query)))):
        return None  # the word, stemmed again, is another: not a query this check can make
    got = _full_text_top_10(session, access, query, vector)
    return bool(got) and owner.execute(f"select exists (select 1 from memories where id = any(%s) and {_HOLDS})",
                                       [got, _as_query(rare)]).fetchone()[0]


def _every_word_found(session, access, query: str, vector: np.ndarray) -> tuple[int, int]:
    """Of the full-text retriever's top 10, how many rows hold every word of the query, and how many could (the
    principal's rows that do, up to 10): a pool sentence is held whole by the rows written from it."""
    every = func.plainto_tsquery(CONFIG, query)
    could = session.scalar(select(func.count()).select_from(
        select(Memory.id).where(Memory.status == "active", Memory.search_tsv.op("@@")(every)).limit(10).subquery()))
    got = _full_text_top_10(session, access, query, vector)
    held = session.scalar(select(func.count()).where(Memory.id.in_(got), Memory.search_tsv.op("@@")(every))) \
        if got else 0
    return held, could


def measure(args, sentences: list[str], pool: np.ndarray) -> dict:
    db = get_database()
    rng = random.Random(args.seed + 1)
    embedder = LocalEmbedder()
    embedder.warm_up()
    freeze_heap()  # as a served process does once loaded
    pool_of = {s: pool[i] for i, s in enumerate(sentences)}

    def embed(texts: list[str]) -> list[list[float]]:
        # The query is a pool sentence: its real embedding, so latency includes a real model call.
        vectors = embedder.embed(texts)
        return [pool_of[t].tolist() if t in pool_of else v for t, v in zip(texts, vectors)]

    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        s.execute(text("select setseed(0.5)"))  # the same typical principals in every measuring pass
        big = s.execute(text("select id from organizations where name = 'big'")).scalar_one()
        big_memories = s.execute(text("select count(*) from memories where org_id = :big and status = 'active'"),
                                 {"big": big}).scalar_one()
        principals = s.execute(text(
            "select m.org_id, m.user_id, c.id from memberships m join conversations c on c.user_id = m.user_id "
            "where m.org_id <> :big order by random() limit :n"), {"big": big, "n": args.queries + WARM_TURNS}).all()
        principals, warm_principals = principals[:args.queries], principals[args.queries:]
        big_principals = s.execute(text(
            "select m.org_id, m.user_id, c.id from memberships m join conversations c on c.user_id = m.user_id "
            "where m.org_id = :big"), {"big": big}).all()
        counts = {t: s.execute(text(f"select count(*) from {t}")).scalar_one()
                  for t in ("organizations", "users", "contacts", "memories", "messages")}
    # The big org has few users: each is measured several times, with different queries.
    sample = [(p, False) for p in principals] + [(rng.choice(big_principals), True)
                                                 for _ in range(big_queries(args))]
    lat = {"assemble_context": [], "search": [], "assemble_context_big": [], "search_big": []}
    recall = {"memories": [], "messages": [], "memories_big": [], "messages_big": [], "hnsw_post_filter_memories": []}
    rare_found = {"typical": [], "big_org": []}
    every_found = {"typical": [0, 0], "big_org": [0, 0]}
    # Latency first, for every principal, then recall: the recall pass reads all of a principal's rows
    # and walks the HNSW graph with a forced plan, which would evict the cache between timed calls.
    queries = [rng.choice(sentences) for _ in sample]
    accesses, traces = [], []

    def turn(org_id, user_id, conv_id, query) -> tuple[Access, float, float]:
        """One principal's turn, as the API serves it: its block, then a search; milliseconds of each."""
        with db.unit_of_work(SYSTEM) as uow:
            access = load_access(uow.session, org_id, user_id=user_id)
        with db.unit_of_work(access.scope()) as uow:
            t0 = time.perf_counter()
            block = assemble_context(uow.session, access, conv_id, query, now=NOW, embed=embed, embed_model=MODEL)
            took = (time.perf_counter() - t0) * 1000
            # Committed as the API commits it: a rolled-back write would make the driver forget the
            # connection's prepared statements, which the app keeps. The traces are deleted after the pass.
            uow.commit()
        traces.append(block.trace_id)
        with db.unit_of_work(access.scope()) as uow:
            t0 = time.perf_counter()
            search(uow.session, access, query, embed=embed, embed_model=MODEL)
            return access, took, (time.perf_counter() - t0) * 1000

    # Each of the big org's principals once: the first turn of one in a process also counts its rows, which it then
    # remembers for principal_size.BIG_SECONDS (a served process counts each big principal once in that time).
    warm_big = list(big_principals) if big_queries(args) else []
    for i, (org_id, user_id, conv_id) in enumerate(warm_principals + warm_big):  # untimed: see the module's text
        turn(org_id, user_id, conv_id, sentences[i])
    for ((org_id, user_id, conv_id), is_big), query in zip(sample, queries):
        suffix = "_big" if is_big else ""
        access, block_ms, search_ms = turn(org_id, user_id, conv_id, query)
        accesses.append(access)
        lat["assemble_context" + suffix].append(block_ms)
        lat["search" + suffix].append(search_ms)
    with psycopg.connect(_libpq(resolve_urls().owner), autocommit=True) as conn:  # the bench leaves no traces
        conn.execute("delete from memory_traces where id = any(%s)", [[t for t in traces if t]])
    with psycopg.connect(_libpq(resolve_urls().owner), autocommit=True) as owner:
        for (_, is_big), query, access in zip(sample, queries, accesses):
            with db.unit_of_work(access.scope()) as uow:
                vector = np.asarray(embed([query])[0])
                found = _rare_word_found(uow.session, owner, access, query, vector, rng)
                held, could = _every_word_found(uow.session, access, query, vector)
            group = "big_org" if is_big else "typical"
            every_found[group][0] += held
            every_found[group][1] += could
            if found is not None:
                rare_found[group].append(found)
    for (_, is_big), query, access in zip(sample, queries, accesses) if args.recall else ():
        suffix = "_big" if is_big else ""
        vector = np.asarray(embed([query])[0], dtype=np.float32)
        with db.unit_of_work(access.scope()) as uow:
            for model, visible, kind in ((Memory, memory_visible, "memory"), (Message, message_visible, "message")):
                truth = _exact_top(uow.session, access, model, visible, vector)
                got = retrieve(uow.session, access, "x", kinds=[kind], per_retriever=10, vector=vector.tolist(),
                               retrievers=["vector"])["vector"]
                if truth:
                    key = ("memories" if model is Memory else "messages") + suffix
                    recall[key].append(len(set(truth) & {f.id for f in got}) / len(truth))
                if model is Memory and not is_big and truth:
                    # What the HNSW index returns for a plain filtered query when the planner uses it
                    # (forced here; no exact scan, no iterative scan): the post-filtering problem.
                    for setting in ("hnsw.iterative_scan = off", "hnsw.ef_search = 40", "enable_sort = off",
                                    "enable_bitmapscan = off", "enable_seqscan = off"):
                        uow.session.execute(text(f"set local {setting}"))
                    naive = uow.session.scalars(select(Memory.id).where(
                        memory_visible(access), Memory.status == "active", Memory.embedding.isnot(None))
                        .order_by(Memory.embedding.cosine_distance(vector.tolist())).limit(10)).all()
                    recall["hnsw_post_filter_memories"].append(len(set(truth) & set(naive)) / len(truth))
    return {
        # Latency on a shared 2-core machine depends on what else runs: the load average says how busy it was.
        "load_average_during_measure": [round(x, 2) for x in os.getloadavg()],
        "rows": counts,
        "exact_scan_max": EXACT_SCAN_MAX,
        "principals_measured": {"typical": len(principals), "big_org": len(sample) - len(principals)},
        "big_org_active_memories": big_memories,
        "big_org_has_its_own_indexes": big in indexed_orgs_now(),
        "latency_ms": {name: {"p50": round(statistics.median(v), 1) if v else None, "p95": pct(v, 0.95)}
                       for name, v in lat.items()},
        "vector_recall_at_10_vs_exact": {name: round(statistics.mean(v), 4) if v else None
                                         for name, v in recall.items()},
        # A query of common words and one rare word of a row the principal sees: a row holding it in the top 10.
        "full_text_rare_word_in_top_10": {name: f"{sum(v)}/{len(v)}" if v else None for name, v in rare_found.items()},
        # The query itself: rows holding every one of its words in the full-text top 10, of those that could be.
        "full_text_every_word_in_top_10": {name: f"{held}/{could}" for name, (held, could) in every_found.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orgs", type=int, default=10_000)
    parser.add_argument("--users-per-org", type=int, default=3)
    parser.add_argument("--contacts-per-org", type=int, default=5)
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--big-share", type=float, default=0.05, help="Share of all rows in the one big org.")
    parser.add_argument("--queries", type=int, default=200, help="Principals measured (plus 10%% from the big org).")
    parser.add_argument("--big-queries", type=int, default=None,
                        help="Turns of the big org's principals (default: 10%% of --queries, at least 1).")
    parser.add_argument("--no-recall", dest="recall", action="store_false",
                        help="No vector recall pass (it reads every visible row of each principal measured).")
    parser.add_argument("--pool", type=int, default=3000, help="Distinct sentences behind the rows.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--maintenance-work-mem", default="2GB")
    parser.add_argument("--skip-load", action="store_true", help="Measure what is already loaded.")
    parser.add_argument("--org-indexes", choices=("off", "on", "both"), default="both",
                        help="Measure without the big org's own indexes, with them (jobs/org_indexes.py), or both.")
    args = parser.parse_args()
    from memory_core.adapters.runtime import start_servers

    start_servers()  # a bench runs alone: it starts the embedded servers it needs
    migrate()
    sentences = pool_sentences(args.pool, random.Random(args.seed))
    pool = LocalEmbedder(batch_size=64).embed_array(sentences)
    report: dict = {"args": {k: v for k, v in vars(args).items()}}
    if not args.skip_load:
        report["load"] = generate(args, sentences, pool)
        print(json.dumps({"loaded": report["load"]}), flush=True)
    if args.org_indexes in ("off", "both"):
        drop_org_indexes()
        report["without_org_indexes"] = measure(args, sentences, pool)
    if args.org_indexes in ("on", "both"):
        report["org_index_job"] = refresh_org_indexes()
        report["with_org_indexes"] = measure(args, sentences, pool)
    print(json.dumps(report, indent=2))
    side_by_side(report)


def big_queries(args) -> int:
    return args.big_queries if args.big_queries is not None else max(1, args.queries // 10)


def indexed_orgs_now() -> frozenset:
    org_indexes.forget_cache()
    with get_database().unit_of_work(SYSTEM) as uow:
        return org_indexes.indexed_orgs(uow.session)


def drop_org_indexes() -> None:
    """Measure the one-graph path: no org (and no person) has its own indexes."""
    with get_database().unit_of_work(SYSTEM) as uow:
        owners = list(org_indexes.existing_owners(uow.session))
    with psycopg.connect(_libpq(resolve_urls().owner), autocommit=True) as conn:
        for org in indexed_orgs_now():
            for stmt in org_indexes.drop_statements(org):
                conn.execute(stmt)
        for user in owners:
            for stmt in org_indexes.owner_drop_statements(user):
                conn.execute(stmt)
    org_indexes.forget_cache()


def side_by_side(report: dict) -> None:
    """The big org's principal against a typical one, without and with the org's own indexes."""
    passes = [(name, report[key]) for name, key in (("one graph", "without_org_indexes"),
                                                    ("org indexes", "with_org_indexes")) if key in report]
    if not passes:
        return
    first = passes[0][1]
    print(f"\nbig org ({first['big_org_active_memories']} active memories) vs a typical principal "
          f"({first['rows']['memories']} memories in all; load average {first['load_average_during_measure']}):")
    print("  pass        | principal | assemble_context p50/p95 ms | search p50/p95 ms | recall@10 memories | "
          "full-text top 10: rare word / every word")
    for name, r in passes:
        lat, rec = r["latency_ms"], r["vector_recall_at_10_vs_exact"]
        rare, every = r["full_text_rare_word_in_top_10"], r["full_text_every_word_in_top_10"]
        for who, suffix, group in (("typical", "", "typical"), ("big org", "_big", "big_org")):
            ctx, srch = lat["assemble_context" + suffix], lat["search" + suffix]
            print(f"  {name:11s} | {who:9s} | {ctx['p50']:>12} / {ctx['p95']:<12} | {srch['p50']:>7} / "
                  f"{srch['p95']:<8} | {str(rec['memories' + suffix]):18s} | {rare[group]} / {every[group]}")


if __name__ == "__main__":
    main()

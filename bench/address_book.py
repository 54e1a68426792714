"""A memory block for an org with a big address book: latency and whether the named contact's facts are in it.

    python bench/address_book.py [--sizes 40,1000,5000] [--turns 60]

For each size N a scratch org gets N contacts whose names share words ("Talleres Ruiz 17", "Academia García
230") and an owner who asks about one of them by name, by an alias's word or by a word of its name. Each
named contact has a payment term stored. Prints `assemble_context` and `search` p50/p95 (ms, one process, the
turns alternating between the sizes), how many blocks held the named contact's term and how many searches found
the contact. The scratch orgs are removed.

Uses the configured servers (DATABASE_URL/REDIS_URL, or the embedded ones in MEMORIA_DATA_DIR).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import create_engine, insert, text  # noqa: E402

from bench.percentiles import pct  # noqa: E402
from evals.scratch import remove_scratch, scratch_org  # noqa: E402
from memory_core.adapters.config import get_settings  # noqa: E402
from memory_core.adapters.db import SYSTEM, get_database, resolve_urls  # noqa: E402
from memory_core.adapters.runtime import start_servers  # noqa: E402
from memory_core.backends.local_embedder import LocalEmbedder  # noqa: E402
from memory_core.domain.access import load_access  # noqa: E402
from memory_core.domain.models import Contact, Conversation, Memory  # noqa: E402
from memory_core.reading.context import assemble_context  # noqa: E402
from memory_core.reading.search import search  # noqa: E402

TRADES = ["Academia", "Clínica", "Ferretería", "Transportes", "Construcciones", "Hierros", "Talleres", "Reformas"]
SURNAMES = ["García", "López", "Martín", "Sánchez", "Romero", "Navarro", "Torres", "Domínguez", "Vázquez", "Ramos",
            "Gil", "Serrano", "Blanco", "Molina", "Morales", "Ortega", "Delgado", "Castro", "Ortiz", "Rubio"]
# The contacts asked about: (name, alias, its stored term) and how a turn names them.
NAMED = [("Talleres Olano S.L.", "Olano", "45 días"), ("Hierros Ybarra S.A.", "Ybarra", "60 días"),
         ("Clínica Zubiri", "Zubiri", "90 días")]
QUESTIONS = ["¿A cuántos días paga {name}?", "Prepara la factura de {alias}", "¿Cuándo nos paga {alias}?"]


def filler(i: int) -> str:
    return f"{TRADES[i % len(TRADES)]} {SURNAMES[i // len(TRADES) % len(SURNAMES)]} {i}"


def load(db, size: int, embedder: LocalEmbedder) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID, dict[str, uuid.UUID]]:
    with db.unit_of_work(SYSTEM) as uow:
        s = uow.session
        org, owner = scratch_org(s, f"bench address book {size} {uuid.uuid4().hex[:6]}",
                                 owner_email=f"bench-{uuid.uuid4().hex}@bench.memoria.invalid", owner_name="Bench")
        s.execute(insert(Contact), [{"org_id": org.id, "kind": "customer", "aliases": [], "name": filler(i)}
                                    for i in range(size - len(NAMED))])
        ids = {}
        for name, alias, term in NAMED:
            contact = Contact(org_id=org.id, name=name, kind="customer", aliases=[alias])
            s.add(contact)
            s.flush()
            ids[name] = contact.id
            sentence = f"{name} paga a {term}."
            s.add(Memory(org_id=org.id, level="shared", area="contacts", category="customer",
                         subject=f"contact:{contact.id}", attribute="plazo_pago", value=term, sentence=sentence,
                         confidence=0.9, status="active", origin="background", author_user_id=owner.id,
                         embedding=embedder.embed([sentence])[0], embed_model=embedder.model_name))
        conv = Conversation(channel="web", external_id=f"bench-{uuid.uuid4()}", org_id=org.id, user_id=owner.id)
        s.add(conv)
        s.flush()
        uow.commit()
        return org.id, owner.id, conv.id, ids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="40,1000,5000")
    ap.add_argument("--turns", type=int, default=60)
    args = ap.parse_args()
    start_servers()
    db = get_database()
    embedder = LocalEmbedder()
    sizes = [int(x) for x in args.sizes.split(",")]
    orgs = {n: load(db, n, embedder) for n in sizes}
    # As autovacuum would soon after an import: the planner then knows how many contacts each org has.
    with create_engine(resolve_urls(get_settings()).owner).connect() as owner:
        owner.execute(text("analyze contacts"))
        owner.execute(text("analyze memories"))
        owner.commit()
    took: dict[str, dict[int, list[float]]] = {call: {n: [] for n in sizes} for call in ("block", "search")}
    found: dict[str, dict[int, int]] = {call: dict.fromkeys(sizes, 0) for call in ("block", "search")}
    rng = random.Random(5)
    try:
        for turn in range(args.turns + 5):
            name, alias, term = NAMED[turn % len(NAMED)]
            question = rng.choice(QUESTIONS).format(name=name.rsplit(" ", 1)[0] if "." in name else name, alias=alias)
            for n in sizes:
                org_id, user_id, conv_id, ids = orgs[n]
                with db.unit_of_work(SYSTEM) as uow:
                    access = load_access(uow.session, org_id, user_id=user_id)
                with db.unit_of_work(access.scope()) as uow:
                    started = time.perf_counter()
                    block = assemble_context(uow.session, access, conv_id, question, embed=embedder.embed,
                                             embed_model=embedder.model_name)
                    in_block = (time.perf_counter() - started) * 1000
                    uow.commit()
                with db.unit_of_work(access.scope()) as uow:
                    started = time.perf_counter()
                    hits = search(uow.session, access, question, embed=embedder.embed, embed_model=embedder.model_name)
                    in_search = (time.perf_counter() - started) * 1000
                if turn >= 5:  # the first turns warm each org's plans and pages
                    took["block"][n].append(in_block)
                    took["search"][n].append(in_search)
                    found["block"][n] += term in block.text
                    found["search"][n] += any(h.id == ids[name] for h in hits)
        print(f"{'contacts':>8} {'call':<7} {'p50 ms':>7} {'p95 ms':>7} {'found':>8}")
        for n in sizes:
            for call in ("block", "search"):
                values = took[call][n]
                print(f"{n:>8} {call:<7} {statistics.median(values):>7.1f} {pct(values, 0.95):>7.1f} "
                      f"{found[call][n]:>4}/{len(values)}")
    finally:
        for org_id, user_id, _, _ in orgs.values():
            remove_scratch(db, org_id, [user_id])


if __name__ == "__main__":
    main()

"""What one local extraction costs as a writer's address book and known names grow, printed.

    python bench/extractor_scale.py [--sizes 0,50,200,500] [--rounds 20]

The worker shows the extractor the org's contacts (all of them up to 50, else the 40 a message most likely
names: learning/contact_candidates.py) and the names the writer has learnt about that share a word with the
message (learning/context_reads.py). Every sentence is looked up in both. This times
`LocalExtractor.extract` (CPU ms an extraction, this process) on a fixed mix of Spanish and English messages
with N known names beside 40 contacts, and with N contacts and no names. Nothing is stored: no servers needed.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory_core.backends.local_extractor.extractor import LocalExtractor  # noqa: E402
from memory_core.domain.model_port import ExtractionContext, KnownContact  # noqa: E402

FIRST = ["Marta", "Luis", "Carmen", "Javier", "Lucía", "Pablo", "Elena", "Diego", "Sara", "Andrés"]
LAST = ["García", "Olano", "Levante", "Pérez", "Martínez", "Ruiz", "Navarro", "Sanz", "Iglesias", "Ortega"]
TRADES = ["Talleres", "Hierros", "Construcciones", "Transportes", "Clínica", "Ferretería", "Academia", "Reformas"]
MESSAGES = ["Talleres García paga a 60 días desde ahora",
            "el contacto en Hierros Olano es Marisa, su teléfono 600123123",
            "mañana tengo reunión con el gerente de Transportes Vidal para cerrar el pedido de mayo",
            "Our supplier Acme Ltd delivers on Tuesdays and invoices at 30 days",
            "recuerda que a Clínica Serrano no le gusta que la llamemos antes de las diez",
            "tenemos un cliente nuevo, Farmacia Levante, y paga a 30 días",
            "My sister Elena Ruiz moved to Bilbao last month"]


def contacts(n: int) -> tuple[KnownContact, ...]:
    return tuple(KnownContact(id=str(i), name=f"{TRADES[i % len(TRADES)]} {LAST[i // len(TRADES) % len(LAST)]} {i}",
                              kind="customer", aliases=(f"{LAST[i % len(LAST)]} {i}",)) for i in range(n))


def names(n: int) -> tuple[str, ...]:
    return tuple(f"{FIRST[i % len(FIRST)].lower()} {LAST[i // len(FIRST) % len(LAST)].lower()} {i}" for i in range(n))


def ms_an_extraction(known: tuple[KnownContact, ...], learnt: tuple[str, ...], rounds: int) -> float:
    extractor = LocalExtractor()
    cases = [ExtractionContext(message=m, contacts=known, known_names=learnt) for m in MESSAGES]
    for case in cases:  # first runs: caches and the writer's index, as a batch's first message builds them
        extractor.extract(case)
    started = time.process_time()
    for _ in range(rounds):
        for case in cases:
            extractor.extract(case)
    return (time.process_time() - started) / (rounds * len(cases)) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="0,50,200,500")
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    print(f"{'N':>5} {'N names + 40 contacts':>22} {'N contacts':>11}   (CPU ms an extraction)")
    for n in (int(x) for x in args.sizes.split(",")):
        with_names = ms_an_extraction(contacts(40), names(n), args.rounds)
        with_contacts = ms_an_extraction(contacts(n), (), args.rounds)
        print(f"{n:>5} {with_names:>22.2f} {with_contacts:>11.2f}", flush=True)


if __name__ == "__main__":
    main()

"""Compaction on a synthetic 120-exchange conversation: prompt tokens before/after, and whether every tax
ID, amount and date of the early exchanges survives successive compactions (local compactor, in memory).

    .venv/bin/python bench/compaction.py [--exchanges 120] [--every 20]

Prints one JSON object. Nothing is asserted: tests/test_compaction.py holds the guarantees.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory_core.backends.local_compactor import LocalCompactor  # noqa: E402
from memory_core.domain.model_port import CompactMessage, critical_tokens  # noqa: E402
from memory_core.reading.compaction import (  # noqa: E402
    active_points,
    apply_operations,
    estimate_tokens,
    message_tokens,
    render_summary,
)

CUSTOMERS = [("Talleres García S.L.", "B12345678"), ("Hierros Sánchez S.A.", "A87654321"),
             ("Panadería Ruiz", "12345678Z"), ("Acme Suministros S.A.", "A11223344"), ("Frutas Lola", "B99887766")]
FILLER = ["¿Qué tal va la semana? Hoy hay mucho lío en el taller con los pedidos de recambios y las citas.",
          "Vale, seguimos con lo del inventario del almacén cuando tengas un rato esta tarde.",
          "Recuérdame qué proveedores tenemos para aceite y filtros, que quiero comparar precios este mes.",
          "Perfecto, entonces lo vemos mañana con calma y preparamos los presupuestos pendientes."]


def conversation(exchanges: int, seed: int = 7) -> list[CompactMessage]:
    rnd = random.Random(seed)
    t0 = dt.datetime(2026, 3, 2, 9, tzinfo=dt.timezone.utc)
    msgs = []
    for i in range(exchanges):
        if i < len(CUSTOMERS):
            name, tax = CUSTOMERS[i]
            amount = f"{rnd.randint(100, 9999)}.{rnd.randint(0, 999):03d},{rnd.randint(0, 99):02d} €"
            user = f"Nuevo cliente {name}, CIF {tax}; primera factura de {amount} con fecha {i + 3:02d}/03/2026."
            bot = f"Anotado {name} (CIF {tax}), factura de {amount} del {i + 3:02d}/03/2026."
        else:
            user, bot = rnd.choice(FILLER), "De acuerdo. " + rnd.choice(FILLER)
        for role, text in (("user", user), ("assistant", bot)):
            msgs.append(CompactMessage(str(uuid.uuid4()), role, text, t0 + dt.timedelta(minutes=len(msgs))))
    return msgs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exchanges", type=int, default=120)
    ap.add_argument("--every", type=int, default=20, help="compact after this many exchanges")
    ap.add_argument("--keep", type=int, default=600,
                    help="recent tokens kept verbatim (the web default is 4,000; smaller shows more folding)")
    args = ap.parse_args()
    msgs = conversation(args.exchanges)
    early = set().union(*(critical_tokens(m.text) for m in msgs[: 2 * len(CUSTOMERS)]))
    content, covered, compactions, seconds = None, 0, 0, 0.0
    known = {m.id for m in msgs}
    for upto in range(args.every * 2, len(msgs) + 1, args.every * 2):
        window = msgs[covered:upto]
        # keep the recent part verbatim, fold the rest
        kept, cut = 0, len(window)
        while cut > 0 and kept + message_tokens(window[cut - 1].text) <= args.keep:
            kept += message_tokens(window[cut - 1].text)
            cut -= 1
        if cut == 0:
            continue
        started = time.perf_counter()
        ops, _ = LocalCompactor().compact(active_points(content), window[:cut])
        content, _ = apply_operations(content, ops, known_message_ids=known, compaction=compactions + 1)
        seconds += time.perf_counter() - started
        covered += cut
        compactions += 1
    summary = render_summary(content)
    kept_ids = set().union(*(critical_tokens(p["text"]) for p in active_points(content)))
    full = sum(message_tokens(m.text) for m in msgs)
    compacted = estimate_tokens(summary) + sum(message_tokens(m.text) for m in msgs[covered:])
    print(json.dumps({
        "exchanges": args.exchanges, "keep_recent_tokens": args.keep, "compactions": compactions,
        "points": len(active_points(content)),
        "history_tokens_verbatim": full, "history_tokens_compacted": compacted,
        "early_identifiers": len(early), "early_identifiers_kept": len(early & kept_ids),
        "compaction_ms_total": round(seconds * 1000, 1),
    }))


if __name__ == "__main__":
    main()

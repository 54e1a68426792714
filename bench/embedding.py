"""Throughput and a Spanish sanity check of the local embedding.

    python bench/embedding.py [--n 1000] [--threads N] [--json]

Embeds N generated Spanish sentences (short business and personal facts, the kind memoria stores)
with every installed engine, and prints sentences/second plus a few similarity triples: the first
sentence must be closer to the paraphrase than to the unrelated one. The machines are shared: the
load average is printed with each figure, since other processes on the 2 cores change them a lot.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory_core.backends.local_embedder import LocalEmbedder, numpy_available, onnx_available  # noqa: E402

SUBJECTS = ["Acme", "Transportes García", "mi jefa", "la proveedora de papel", "el cliente Pérez", "nuestra empresa",
            "Sara", "el gestor", "Construcciones Ruiz", "la asesoría", "mi hermano Luis", "el almacén de Sevilla"]
VERBS = ["paga a", "prefiere", "entrega en", "factura cada", "llama los", "cobra a", "trabaja con", "cierra en",
         "tiene la reunión el", "quiere recibir", "no acepta", "cambió su cuenta a"]
OBJECTS = ["60 días", "correo electrónico", "Madrid", "fin de mes", "lunes por la mañana", "30 días fecha factura",
           "transferencia bancaria", "agosto", "WhatsApp", "pedidos de más de 500 euros", "un IBAN nuevo",
           "presupuestos por escrito"]
TAILS = ["", " desde enero", ", según me dijo ayer", " y lo confirma por email", " salvo en verano",
         ", eso me comentó Marta", " a partir del próximo trimestre"]

TRIPLES = [
    ("paga a 60 días", "condiciones de cobro de 60 días", "mi hija se llama Sara"),
    ("prefiero que me escribas por email", "mi canal preferido es el correo electrónico", "la factura vence el martes"),
    ("mi hija se llama Sara", "Sara es mi hija", "el proveedor entrega en Valencia"),
    ("el proveedor entrega los lunes", "las entregas del proveedor son cada lunes", "odio las reuniones largas"),
    ("Acme cambió su cuenta bancaria", "el cliente Acme tiene un IBAN nuevo", "me gusta el café solo"),
]


def sentences(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}" for _ in range(n)]


def measure(embedder: LocalEmbedder, texts: list[str]) -> dict:
    t0 = time.perf_counter()
    embedder.warm_up()
    load_s = time.perf_counter() - t0
    embedder.embed(texts[:16])  # warm caches
    t0 = time.perf_counter()
    vectors = embedder.embed_array(texts)
    elapsed = time.perf_counter() - t0
    norms = np.linalg.norm(vectors, axis=1)
    sims = []
    for a, b, c in TRIPLES:
        va, vb, vc = embedder.embed_array([a, b, c])
        sims.append({"text": a, "paraphrase": round(float(va @ vb), 3), "unrelated": round(float(va @ vc), 3),
                     "ok": bool(va @ vb > va @ vc)})
    return {
        "model_name": embedder.model_name, "engine": embedder.engine, "batch_size": embedder.batch_size,
        "threads": embedder.threads, "n": len(texts), "loadavg_1m": round(os.getloadavg()[0], 2),
        "dim": int(vectors.shape[1]),
        "load_s": round(load_s, 2), "seconds": round(elapsed, 3),
        "sentences_per_s": round(len(texts) / elapsed, 1),
        "norm_min": round(float(norms.min()), 5), "norm_max": round(float(norms.max()), 5),
        "similarity": sims, "similarity_ok": all(s["ok"] for s in sims),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=None, help="default: the embedder's own (1 per text, 2 batched)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    texts = sentences(args.n)
    runs = []
    if onnx_available():
        runs.append(LocalEmbedder("onnx", threads=args.threads))  # default: one text per run
        if args.threads is None:
            runs.append(LocalEmbedder("onnx", threads=2))  # the same with two threads, for comparison
        runs.append(LocalEmbedder("onnx", threads=args.threads, batch_size=32))
    if numpy_available():
        runs.append(LocalEmbedder("numpy", threads=args.threads))
    if not runs:
        print("no local embedding engine installed", file=sys.stderr)
        return 1
    results = [measure(e, texts) for e in runs]
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
        return 0
    for r in results:
        print(f"{r['model_name']:<28} engine={r['engine']:<5} batch={r['batch_size']:<4} threads={r['threads']} "
              f"load={r['load_s']:.2f}s  {r['n']} sentences in {r['seconds']:.3f}s = {r['sentences_per_s']:.0f}/s  "
              f"dim={r['dim']} norm=[{r['norm_min']}, {r['norm_max']}] (load average {r['loadavg_1m']})")
        for s in r["similarity"]:
            mark = "ok " if s["ok"] else "BAD"
            print(f"   {mark} {s['text']!r}: paraphrase {s['paraphrase']:.3f} > unrelated {s['unrelated']:.3f}")
    return 0 if all(r["similarity_ok"] for r in results) else 2


if __name__ == "__main__":
    sys.exit(main())

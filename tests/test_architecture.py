"""The import rules of docs/architecture.md, read from the source (every import, lazy ones too)."""
from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The project's top-level packages and modules (bench and app are entry points: they may import anything).
PROJECT = ("memory_core", "web", "console", "review", "api", "health", "jobs", "client", "evals", "bench", "app")
FLASK = ("flask", "flask_login", "flask_wtf", "wtforms")

# Who may not import whom: the layers point inwards, to memory_core.
FORBIDDEN = {
    "memory_core": FLASK + ("web", "console", "review", "api", "jobs", "evals", "bench", "app"),
    "jobs": FLASK + ("web", "console", "review", "api", "evals", "bench", "app"),
    "web": ("console", "review", "api", "jobs", "evals", "bench", "app"),
    "console": ("review", "api", "evals", "bench", "app"),
    "review": ("api", "evals", "bench", "app"),
    "api": ("console", "review", "health", "evals", "bench", "app"),
    "health": ("console", "review", "api", "jobs", "evals", "bench", "app"),
    "evals": FLASK + ("web", "console", "review", "api", "jobs", "bench", "app"),
    "client": tuple(p for p in PROJECT if p != "client"),
}

# memory_core's subpackages, bottom first: each imports only the tiers beneath it, never a sibling of its
# own tier nor a tier above (docs/architecture.md). adapters is infrastructure that knows nothing of
# memories; the domain builds on it (access sets adapters.db's row-security Scope).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("adapters",),
    ("domain",),
    ("backends",),
    ("tenancy",),
    ("privacy", "reading"),
    ("learning",),
)

# Private names still imported across modules (none: keep it that way).
PRIVATE_IMPORTS_BEING_REMOVED: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _sources() -> dict[str, ast.Module]:
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).parts
        # packages/ holds separately installed distributions (the embedder's model); setup.py is packaging.
        if rel[0] in (".venv", "tests", "migrations", "examples", "scripts", "build", "packages", "setup.py") \
                or rel[0].startswith("."):
            continue
        out[_module_name(path)] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return out


def _imports(tree: ast.Module) -> list[tuple[str, list[ast.alias], int]]:
    """(module, names imported from it, line) for every absolute import, at any depth. A plain
    `import x.y [as z]` comes back as module "x.y" with one alias binding z (or x) to it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, [ast.alias(name="", asname=a.asname or a.name.split(".")[0])], node.lineno)
                      for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.names, node.lineno))
    return found


def _top(module: str) -> str:
    return module.split(".")[0]


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {p: set() for p in PROJECT}
    for name, tree in _sources().items():
        src = _top(name)
        if src not in graph:
            continue
        for module, _names, _line in _imports(tree):
            dst = _top(module)
            if dst in graph and dst != src:
                graph[src].add(dst)
    return graph


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_each_layer_imports_only_the_layers_beneath_it(package):
    bad = [f"{name}:{line} imports {module}"
           for name, tree in _sources().items() if _top(name) == package
           for module, _names, line in _imports(tree) if _top(module) in FORBIDDEN[package]]
    assert bad == []


def test_the_domain_imports_no_flask_and_no_edge():
    """The rule a newcomer most needs, named on its own (it is part of FORBIDDEN too)."""
    edges = {m for name, tree in _sources().items() if _top(name) == "memory_core"
             for m, _n, _l in _imports(tree) if _top(m) in FLASK + ("web", "console", "review", "api", "jobs")}
    assert edges == set()


def test_no_import_cycle_between_top_level_packages():
    graph = _package_graph()
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt == path[0]:
                cycles.append(" -> ".join(path + [nxt]))
            elif nxt not in path and nxt > path[0]:  # each cycle once, from its smallest member
                visit(nxt, path + [nxt])

    for start in sorted(graph):
        visit(start, [start])
    assert cycles == []


def _subpackage(module: str) -> str | None:
    """"memory_core.domain.ladder" -> "domain"; None outside memory_core's subpackages."""
    parts = module.split(".")
    return parts[1] if parts[0] == "memory_core" and len(parts) > 1 else None


def _subpackage_edges(sources: dict[str, ast.Module]) -> dict[tuple[str, str], list[str]]:
    """(importer, imported) subpackage pairs of memory_core, each with the imports that make it (lazy ones too)."""
    edges: dict[tuple[str, str], list[str]] = {}
    for name, tree in sources.items():
        src = _subpackage(name)
        if src is None:
            continue
        for module, names, line in _imports(tree):
            # `from memory_core import domain` imports the subpackage named, not memory_core itself.
            targets = [f"{module}.{a.name}" for a in names] if module == "memory_core" else [module]
            for target in targets:
                dst = _subpackage(target)
                if dst is not None and dst != src:
                    edges.setdefault((src, dst), []).append(f"{name}:{line} imports {target}")
    return edges


def _cycles(edges) -> list[str]:
    """Every elementary cycle of the graph, once each, from its smallest member."""
    graph: dict[str, set[str]] = {}
    for src, dst in edges:
        graph.setdefault(src, set()).add(dst)
        graph.setdefault(dst, set())
    found = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt == path[0]:
                found.append(" -> ".join(path + [nxt]))
            elif nxt not in path and nxt > path[0]:
                visit(nxt, path + [nxt])

    for start in sorted(graph):
        visit(start, [start])
    return found


def test_every_memory_core_subpackage_has_a_layer():
    placed = {p for tier in LAYERS for p in tier}
    found = {_subpackage(n) for n in _sources()} - {None}
    assert found == placed, f"place {sorted(found - placed)} in LAYERS (tests/test_architecture.py)"


def test_memory_core_subpackages_import_only_the_layers_beneath_them():
    tier = {p: i for i, layer in enumerate(LAYERS) for p in layer}
    bad = [why for (src, dst), whys in sorted(_subpackage_edges(_sources()).items())
           if tier.get(dst, -1) >= tier.get(src, -1) for why in whys]
    assert bad == []


def test_no_import_cycle_between_memory_core_subpackages():
    edges = _subpackage_edges(_sources())
    assert _cycles(edges) == [], {e: w for e, w in edges.items() if (e[1], e[0]) in edges}


def test_the_cycle_check_finds_a_cycle():
    """The check above can fail: a domain module that imports a backend closes domain -> backends -> domain."""
    sources = dict(_sources())
    sources["memory_core.domain.planted"] = ast.parse("from memory_core.backends.local_gate import LocalGate\n")
    assert "backends -> domain -> backends" in _cycles(_subpackage_edges(sources))


def test_review_builds_on_the_console_and_never_the_reverse():
    graph = _package_graph()
    assert "console" in graph["review"] and "review" not in graph["console"]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_uses_another_modules_private_names():
    """Neither `from x import _name` nor `x._name` on an imported project module."""
    bad = []
    for name, tree in _sources().items():
        aliases: dict[str, str] = {}
        for module, names, line in _imports(tree):
            if _top(module) not in PROJECT:
                continue
            for a in names:
                aliases[a.asname or a.name] = f"{module}.{a.name}" if a.name else module
                if _private(a.name) and (name, module) not in PRIVATE_IMPORTS_BEING_REMOVED:
                    bad.append(f"{name}:{line} imports {module}.{a.name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and _private(node.attr)):
                bad.append(f"{name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    assert bad == []


def test_every_package_holds_its_own_modules():
    """The checks above see every package: a new top-level package must be placed in a layer."""
    tops = {_top(n) for n in _sources()}
    assert tops <= set(PROJECT), f"place {sorted(tops - set(PROJECT))} in tests/test_architecture.py"

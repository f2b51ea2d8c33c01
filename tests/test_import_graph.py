"""No import loops between the modules of python/ccbench.

Every module is parsed (not imported) and every import statement in it counts, at module level
or inside a function: a deferred import still ties the two modules together, it only hides the
loop from the interpreter. An edge goes to the module an import names (``from . import x``
names the submodule ``x`` when there is one), not to the packages above it.
"""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "python" / "ccbench"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def extensions() -> set[str]:
    """Compiled modules (``_core``): leaves of the graph, built or not."""
    names = {module_name(p.with_name(p.name.split(".")[0] + ".py")) for p in PKG.rglob("*.so")}
    return names | {"ccbench._core"}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The ccbench modules ``name`` (at ``path``) imports anywhere in its body."""
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # `from pkg import sub` imports the submodule when there is one
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod
                       for a in node.names]
        else:
            continue
        for t in targets:
            # `import a.b.c` names a.b.c; keep the longest known prefix
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods) | extensions()
    g = {m: imports(m, p, known) for m, p in mods.items()}
    return g | {e: set() for e in known - set(mods)}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as its
    shortest loop through its first module, then its other members."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    out = []
    for comp in comps:
        start, members = comp[0], set(comp)
        prev = {start: None}
        frontier = [start]
        loop = None
        while frontier and loop is None:
            nxt = []
            for v in frontier:
                for w in sorted(g[v] & members):
                    if w == start:
                        loop = [v]
                        while prev[loop[-1]] is not None:
                            loop.append(prev[loop[-1]])
                        loop = loop[::-1] + [start]
                        break
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if loop:
                    break
            frontier = nxt
        rest = sorted(members - set(loop))
        out.append(loop + ([f"(also {', '.join(rest)})"] if rest else []))
    return out


def test_the_graph_sees_deferred_and_relative_imports():
    g = graph()
    assert "ccbench.api" in g["ccbench.cli"]           # `from . import api` inside functions
    assert "ccbench.analysis.metrics" in g["ccbench.analysis"]
    assert "ccbench.results" in g["ccbench.analysis.compare"]   # `from ..results import`
    assert len(g) > 60


def test_no_import_loops():
    loops = cycles(graph())
    assert not loops, "import loops (each line: a → b → … → a):\n" + "\n".join(
        " → ".join(c) for c in loops)


def test_the_cli_goes_through_the_public_doors():
    """One experiment or run: ccbench.api; campaigns: ccbench.campaign's package API; the
    command families with their own subcommands (catalogue, studies, agree) on their own."""
    allowed = {"ccbench.api", "ccbench.campaign", "ccbench.catalogue", "ccbench.agree"}
    extra = {m for m in graph()["ccbench.cli"] - allowed if not m.startswith("ccbench.studies")}
    assert not extra, extra


def private_imports() -> list[str]:
    """`from ccbench.x import _name`: one module reaching into another's private names."""
    out = []
    mods = modules()
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("ccbench")):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__") and a.name != "_core":
                        out.append(f"{name}:{node.lineno} imports {a.name} from "
                                   f"{'.' * node.level}{node.module or ''}")
    return out


def test_no_module_imports_another_modules_private_names():
    assert private_imports() == []


def test_config_does_not_reach_up():
    """The config layer imports neither the compiled core nor the package root nor the API
    (the caller passes the scheme registry in), and its modules import each other only at the
    top, never inside a function."""
    g = graph()
    up = {"ccbench", "ccbench._core", "ccbench.api", "ccbench.cli"}
    assert {m: g[m] & up for m in g if m.startswith("ccbench.config") and g[m] & up} == {}
    for name, path in modules().items():
        if not name.startswith("ccbench.config"):
            continue
        known = set(modules())
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = [n for n in ast.walk(fn) if isinstance(n, ast.ImportFrom)
                         and n.level == 1 and f"ccbench.config.{n.module}" in known]
                assert not inner, f"{name}: config import inside {fn.name}() at line {inner[0].lineno}"


def test_no_module_over_900_lines():
    long = {m: n for m, p in modules().items() if (n := len(p.read_text().splitlines())) > 900}
    assert long == {}

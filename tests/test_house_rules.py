"""House rules that a review enforces by hand otherwise (docs/architecture.md): a Python
function of the package is at most 80 lines (the CLI's parser table excepted). (Modules of at
most 900 lines: tests/test_import_graph.py.)"""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "python" / "ccbench"
EXEMPT = {("cli.py", "build_parser")}


def _functions():
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield path, node


def test_functions_are_at_most_80_lines():
    long = [f"{p.relative_to(PKG)}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1} lines)"
            for p, n in _functions()
            if n.end_lineno - n.lineno + 1 > 80 and (p.name, n.name) not in EXEMPT]
    assert not long, "cut these into named steps: " + "; ".join(long)


"""docs/architecture.md checked against the code: every top-level module of python/ccbench has
a row in its "Python package layout" table, and the columns it lists under "Results directory"
are the results schema's (python/ccbench/results/schema.py), in order, with their types.

The column list is prose with a convention the parser below follows: a backtick span lists
columns separated by commas, each ``name type`` or ``name`` alone; a name alone takes the type
of the next typed column of its span (``a, b, c i64?``), or else the type in parentheses right
after the span (``(u64)``); a span of one untyped name followed by ``(categorical`` is a string
column. ``?`` marks a column with nulls. Backtick spans that follow none of these forms (values,
other identifiers) are not columns.
"""
from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from ccbench.results.schema import CC_PREFIX, SCHEMAS

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PKG = ROOT / "python" / "ccbench"

TYPES = {"u8": pl.UInt8, "u32": pl.UInt32, "u64": pl.UInt64, "i32": pl.Int32,
         "i64": pl.Int64, "f64": pl.Float64, "bool": pl.Boolean, "str": pl.String}
#: the encodings that can carry a null (results/schema.py): i64::MIN, a negative i32
#: (drop_link), NaN
NULLABLE = {"i64", "i32", "f64"}
_ITEM = re.compile(r"^([a-z_][a-z0-9_<>]*)(?: (u8|u32|u64|i32|i64|f64|bool|str)(\?)?)?$")


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def top_level_modules() -> set[str]:
    mods = {p.stem for p in PKG.glob("*.py") if not p.stem.startswith("__")}
    return mods | {p.parent.name for p in PKG.glob("*/__init__.py")}


def layout_rows() -> set[str]:
    """The modules named in the first column of the package layout table."""
    names: set[str] = set()
    for line in section(DOC.read_text(), "Python package layout").splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        for m in re.findall(r"`([a-z_]+)(?:\.py|/)`", first):
            names.add(m)
    return names


def span_columns(span: str, after: str) -> list[tuple[str, str, bool]] | None:
    """(name, type, nullable) of each column a backtick span lists, None when it is no column
    list. ``after``: the text right after the span."""
    items = [x.strip() for x in span.split(",")]
    parsed = [_ITEM.match(x) for x in items]
    if not items or None in parsed:
        return None
    trailing = re.match(r"\s*\((u8|u32|u64|i32|i64|f64|bool|str)(\?)?\)", after)
    categorical = re.match(r"\s*\(categorical", after)
    out, pending = [], []
    for m in parsed:
        name, typ, null = m.group(1), m.group(2), bool(m.group(3))
        if typ is None:
            pending.append(name)
            continue
        out += [(n, typ, null) for n in pending] + [(name, typ, null)]
        pending = []
    if pending:
        if trailing:
            out += [(n, trailing.group(1), bool(trailing.group(2))) for n in pending]
        elif categorical and len(pending) == 1 and not out:
            out.append((pending[0], "str", False))
        elif out:
            raise AssertionError(f"`{span}`: untyped columns after the last typed one")
        else:
            return None
    return out


def doc_columns() -> dict[str, list[tuple[str, str, bool]]]:
    """Each table's columns as the "Results directory" section lists them."""
    text = section(DOC.read_text(), "Results directory (backend → analysis)")
    bullets = re.findall(r"^- \*\*([a-z_]+)\*\*(.*?)(?=^- \*\*|^\S|\Z)", text,
                         flags=re.M | re.S)
    tables = {}
    for table, body in bullets:
        body = " ".join(body.split())
        cols = []
        for m in re.finditer(r"`([^`]*)`", body):
            got = span_columns(m.group(1), body[m.end():])
            if got:
                cols += [c for c in got if not c[0].startswith(CC_PREFIX)]
        tables[table] = cols
    return tables


def test_every_top_level_module_has_a_row_in_the_package_layout():
    missing = sorted(top_level_modules() - layout_rows())
    assert not missing, f"docs/architecture.md, 'Python package layout', lacks: {missing}"
    gone = sorted(layout_rows() - top_level_modules())
    assert not gone, f"docs/architecture.md lists modules that do not exist: {gone}"


def test_the_documented_columns_are_the_schema_in_order():
    doc = doc_columns()
    assert set(doc) == set(SCHEMAS), (sorted(doc), sorted(SCHEMAS))
    for table, want in SCHEMAS.items():
        names = [c[0] for c in doc[table]]
        assert names == list(want), f"{table}: documented {names}, schema {list(want)}"


def test_the_documented_types_are_the_schema_types():
    wrong = []
    for table, cols in doc_columns().items():
        for name, typ, nullable in cols:
            if TYPES[typ] != SCHEMAS[table][name]:
                wrong.append(f"{table}.{name}: documented {typ}, schema {SCHEMAS[table][name]}")
            if nullable and typ not in NULLABLE:
                wrong.append(f"{table}.{name}: documented {typ}? but {typ} carries no null")
    assert not wrong, "\n".join(wrong)


def test_the_parser_reads_the_conventions():
    assert span_columns("a, b, c i64?", ".") == [("a", "i64", True), ("b", "i64", True),
                                                 ("c", "i64", True)]
    assert span_columns("flow u32, x, y", " (u64)") == [("flow", "u32", False),
                                                        ("x", "u64", False), ("y", "u64", False)]
    assert span_columns("drop_reason", " (categorical `none`") == [("drop_reason", "str", False)]
    assert span_columns("none", " / `queue`") is None
    assert span_columns("PktMeta.flow", " in") is None

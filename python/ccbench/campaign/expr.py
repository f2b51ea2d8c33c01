"""Derived values and filters of a campaign: a small, safe expression language.

Expressions are Python-syntax arithmetic parsed with :mod:`ast` and evaluated by walking the
tree; only the node types below are accepted, so nothing else of Python can run (no
attributes, calls of anything but the helpers, comprehensions, lambdas or imports).

* literals: numbers, strings, ``true``/``false`` (and ``True``/``False``), lists/tuples
* names: axis names, and experiment values by path (``central.rate``, ``flows[0].scheme``,
  ``flows[1].left_delay`` — write ``_`` for ``-`` in keys)
* operators: ``+ - * / // % **``, comparisons (``== != < <= > >=``, chained), ``in``,
  ``not in``, ``and or not``, ``a if cond else b``
* helpers (unit strings as in the experiment file; plain numbers are base units):
  ``rate(x)`` → bit/s, ``time(x)`` → seconds, ``size(x)`` → bytes,
  ``bdp(rate, rtt)`` → bytes, ``unit(x, "B")`` → the string ``"<x>B"``, and
  ``min max abs round floor ceil sqrt log log2 log10 exp int float str``.
"""
from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable, Mapping

from ..config.errors import ConfigError
from ..config.units import split_unit, parse_payload_size, parse_rate, parse_time


class ExprError(ValueError):
    """An expression that cannot be parsed or evaluated; the message says why."""


def _num(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ExprError(f"{what} needs a number, got {x!r}")
    return x


def _unit_value(x: Any, parse, scale: float, what: str) -> float:
    """A unit string through the experiment file's parser (base units / ``scale``), or a
    plain number taken as already in base units."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return x
    if isinstance(x, str) and split_unit(x) is not None and split_unit(x)[1] == "":
        return float(split_unit(x)[0])
    try:
        v = parse(x)
    except ConfigError as e:
        raise ExprError(f"{what}({x!r}): {e.message}; {e.hint}") from None
    if v is None:
        raise ExprError(f"{what}({x!r}) is unlimited, not a number")
    return v / scale


def h_rate(x):
    return _unit_value(x, lambda v: parse_rate(v, ()), 1, "rate")


def h_time(x):
    return _unit_value(x, lambda v: parse_time(v, ()), 1e9, "time")


def h_size(x):
    return _unit_value(x, lambda v: parse_payload_size(v, (), 1448, positive=False), 1, "size")


def h_bdp(rate, rtt):
    return h_rate(rate) * h_time(rtt) / 8


def fmt_number(x: Any) -> str:
    """Shortest faithful text of a number (12 significant digits, no float noise)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)  # inf, -inf, nan: labels show them; a key given one refuses it
        if x == int(x) and abs(x) < 1e15:
            return str(int(x))
        return format(x, ".12g")
    return str(x)


def h_unit(x, suffix):
    if not isinstance(suffix, str):
        raise ExprError(f"unit(x, suffix): the suffix must be a string, got {suffix!r}")
    return fmt_number(_num(x, "unit")) + suffix


def _round(x, nd=None):
    _num(x, "round")
    if nd is None:
        return round(x)
    nd = int(_num(nd, "round's digits"))
    if abs(nd) > 400:  # beyond any float's digits; huge values only cost time
        raise ExprError(f"round(x, {nd}): the digits must lie within ±400")
    return round(x, nd)


HELPERS: dict[str, Callable] = {
    "rate": h_rate, "time": h_time, "size": h_size, "bdp": h_bdp, "unit": h_unit,
    "min": min, "max": max, "abs": abs, "round": _round, "floor": math.floor,
    "ceil": math.ceil, "sqrt": math.sqrt, "log": math.log, "log2": math.log2,
    "log10": math.log10, "exp": math.exp, "int": int, "float": float, "str": fmt_number,
}

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
        ast.Pow: operator.pow}
_CMP = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
        ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_CONST = {"true": True, "false": False, "True": True, "False": False, "null": None,
          "None": None}
MAX_POW = 1e6  # guards `**` against enormous integers
MAX_TEXT = 2000   # characters of an expression (checked before it is parsed)
MAX_DEPTH = 60    # nesting of an expression's operations
MAX_LIST = 10_000  # items of a list an expression builds


def path_of(node: ast.AST) -> str | None:
    """``central.rate`` / ``flows[0].left_delay`` as a path string, or None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = path_of(node.value)
        return None if base is None else f"{base}.{node.attr}"
    if isinstance(node, ast.Subscript):
        base = path_of(node.value)
        idx = node.slice
        if base is None or not (isinstance(idx, ast.Constant) and isinstance(idx.value, int)):
            return None
        return f"{base}[{idx.value}]"
    return None


class Expr:
    """A parsed expression. ``names`` are the paths/names it reads."""

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise ExprError(f"an expression must be a string, got {text!r}")
        self.text = text
        if len(text) > MAX_TEXT:
            raise ExprError(f"an expression of {len(text):,} characters (at most {MAX_TEXT:,}): "
                            f"{text[:40]!r}...")
        try:
            self.tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as e:
            raise ExprError(f"syntax error in {text!r}: {e.msg}") from None
        except (RecursionError, MemoryError):
            raise ExprError(f"{text[:40]!r}... nests too deeply (at most {MAX_DEPTH} levels)") \
                from None
        self.names: list[str] = []
        self._check(self.tree)

    def _check(self, n: ast.AST, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise ExprError(f"{self.text[:40]!r}... nests too deeply (at most {MAX_DEPTH} "
                            "levels)")
        self._check_node(n, depth + 1)

    def _check_node(self, n: ast.AST, depth: int) -> None:
        if isinstance(n, ast.Constant):
            if not isinstance(n.value, (int, float, str, bool)) and n.value is not None:
                raise ExprError(f"unsupported literal {n.value!r} in {self.text!r}")
            return
        p = path_of(n)
        if p is not None and isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)):
            if p not in _CONST:
                self.names.append(p)
            return
        if isinstance(n, ast.BinOp) and type(n.op) in _BIN:
            self._check(n.left, depth), self._check(n.right, depth)
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd, ast.Not)):
            self._check(n.operand, depth)
        elif isinstance(n, ast.BoolOp):
            for v in n.values:
                self._check(v, depth)
        elif isinstance(n, ast.Compare) and all(type(o) in _CMP for o in n.ops):
            self._check(n.left, depth)
            for c in n.comparators:
                self._check(c, depth)
        elif isinstance(n, ast.IfExp):
            self._check(n.test, depth), self._check(n.body, depth), self._check(n.orelse, depth)
        elif isinstance(n, (ast.List, ast.Tuple)):
            for e in n.elts:
                self._check(e, depth)
        elif isinstance(n, ast.Call):
            if not isinstance(n.func, ast.Name) or n.func.id not in HELPERS:
                what = n.func.id if isinstance(n.func, ast.Name) else ast.unparse(n.func)
                raise ExprError(f"unknown function {what!r} in {self.text!r}; helpers: "
                                + ", ".join(HELPERS))
            if n.keywords:
                raise ExprError(f"keyword arguments are not supported in {self.text!r}")
            for a in n.args:
                self._check(a, depth)
        else:
            raise ExprError(f"{ast.unparse(n)!r} is not allowed in {self.text!r} (arithmetic, "
                            "comparisons, names and helper calls only)")

    def eval(self, lookup: Callable[[str], Any]) -> Any:
        """Evaluate with ``lookup(path)`` giving the value of a name."""
        try:
            return self._eval(self.tree, lookup)
        except ExprError:
            raise
        except (TypeError, ValueError, ZeroDivisionError, OverflowError) as e:
            raise ExprError(f"{self.text!r}: {e}") from None

    def _eval(self, n: ast.AST, lookup) -> Any:
        ev = lambda x: self._eval(x, lookup)  # noqa: E731
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)):
            p = path_of(n)
            if p in _CONST:
                return _CONST[p]
            return lookup(p)
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Pow) and isinstance(b, (int, float)) and abs(b) > 64 \
                    and isinstance(a, (int, float)) and abs(a) > 1:
                raise ExprError(f"{self.text!r}: exponent {b} too large")
            if isinstance(a, str) != isinstance(b, str) and not isinstance(n.op, ast.Mult):
                raise ExprError(f"{self.text!r}: cannot combine {a!r} and {b!r} with "
                                f"{type(n.op).__name__.lower()} (convert unit strings with "
                                "rate(), time(), size())")
            if isinstance(n.op, ast.Mult) and (isinstance(a, str) or isinstance(b, str)):
                raise ExprError(f"{self.text!r}: cannot multiply {a!r} and {b!r} (convert unit "
                                "strings with rate(), time(), size())")
            if isinstance(n.op, ast.Mult) and (isinstance(a, list) or isinstance(b, list)):
                lst, k = (a, b) if isinstance(a, list) else (b, a)
                if not isinstance(k, int) or isinstance(k, bool) or len(lst) * max(k, 0) > MAX_LIST:
                    raise ExprError(f"{self.text!r}: a list of more than {MAX_LIST:,} items")
            r = _BIN[type(n.op)](a, b)
            if isinstance(r, list) and len(r) > MAX_LIST:
                raise ExprError(f"{self.text!r}: a list of more than {MAX_LIST:,} items")
            if isinstance(r, (int, float)) and not isinstance(r, bool) and abs(r) > 1e300:
                raise ExprError(f"{self.text!r}: result too large")
            return r
        if isinstance(n, ast.UnaryOp):
            v = ev(n.operand)
            if isinstance(n.op, ast.Not):
                return not v
            _num(v, "a sign")
            return -v if isinstance(n.op, ast.USub) else +v
        if isinstance(n, ast.BoolOp):
            if isinstance(n.op, ast.And):
                r = True
                for v in n.values:
                    r = ev(v)
                    if not r:
                        return r
                return r
            r = False
            for v in n.values:
                r = ev(v)
                if r:
                    return r
            return r
        if isinstance(n, ast.Compare):
            left = ev(n.left)
            for op, c in zip(n.ops, n.comparators):
                right = ev(c)
                if not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(n, ast.IfExp):
            return ev(n.body) if ev(n.test) else ev(n.orelse)
        if isinstance(n, (ast.List, ast.Tuple)):
            return [ev(e) for e in n.elts]
        if isinstance(n, ast.Call):
            return HELPERS[n.func.id](*[ev(a) for a in n.args])
        raise ExprError(f"cannot evaluate {ast.unparse(n)!r}")  # pragma: no cover - _check


def evaluate(text: str, values: Mapping[str, Any]) -> Any:
    """Evaluate ``text`` with names from ``values`` (a convenience for tests and callers)."""
    def lookup(p):
        if p not in values:
            raise ExprError(f"unknown name {p!r} in {text!r}")
        return values[p]
    return Expr(text).eval(lookup)

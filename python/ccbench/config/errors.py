"""Configuration errors.

Every error names the YAML path of the offending value (``flows[1].left-rate``), the value
itself and a hint saying what would be valid.  Parsers collect errors instead of stopping at
the first one, so that ``ccbench validate`` can print them all; :class:`ConfigErrors` carries
the list.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

PathT = tuple  # tuple of str (mapping keys) and int (list indices)

_MISSING = object()


def format_path(path: Sequence[Any]) -> str:
    """``("flows", 1, "left-rate")`` -> ``flows[1].left-rate``; ``()`` -> ``<top>``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = str(part)
    return out or "<top>"


def show(value: Any) -> str:
    """Render a value the way the user wrote it: strings quoted, others as YAML would."""
    if isinstance(value, str):
        return f'"{value}"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)


class ConfigError(ValueError):
    """One problem in an experiment description.

    Attributes:
        path: YAML path of the value, e.g. ``flows[1].left-rate`` (``<top>`` for the document).
        value: the offending value (``None`` when a required key is missing).
        hint: what would be valid (may be empty).
        message: the problem itself, without path and hint.
        source: file name (or ``<string>``), ``line``: 1-based line in it when known.
    """

    def __init__(self, path: Sequence[Any] | str, message: str, hint: str = "",
                 value: Any = None, *, source: str | None = None, line: int | None = None):
        if isinstance(path, str):
            self.path_parts: PathT = (path,) if path else ()
        else:
            self.path_parts = tuple(path)
        self.path = format_path(self.path_parts)
        self.message = message
        self.hint = hint
        self.value = value
        self.source = source
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}"
        if self.hint:
            text += f"; {self.hint}"
        return text

    def located(self) -> str:
        """``file.yaml:7: flows[1].left-rate: ...`` (falls back to ``str()`` without a source)."""
        if self.source is None:
            return str(self)
        loc = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{loc}: {self}"

    def __reduce__(self):  # keep picklable despite the custom __init__
        return (_rebuild, (self.path_parts, self.message, self.hint, self.value,
                           self.source, self.line))


def _rebuild(path, message, hint, value, source, line):
    return ConfigError(path, message, hint, value, source=source, line=line)


class ConfigErrors(ConfigError):
    """Several :class:`ConfigError` at once (always at least one).

    ``path``/``value``/``hint`` are those of the first error, so code that handles a single
    ``ConfigError`` keeps working; ``errors`` holds them all in document order.
    """

    def __init__(self, errors: Iterable[ConfigError]):
        self.errors: list[ConfigError] = list(errors)
        if not self.errors:
            raise ValueError("ConfigErrors needs at least one error")
        first = self.errors[0]
        super().__init__(first.path_parts, first.message, first.hint, first.value,
                         source=first.source, line=first.line)

    def __str__(self) -> str:
        if len(self.errors) == 1:
            return str(self.errors[0])
        lines = [f"{len(self.errors)} errors in the experiment description:"]
        lines += [f"  {e}" for e in self.errors]
        return "\n".join(lines)

    def located(self) -> str:
        if len(self.errors) == 1:
            return self.errors[0].located()
        lines = [f"{len(self.errors)} errors in the experiment description:"]
        lines += [f"  {e.located()}" for e in self.errors]
        return "\n".join(lines)

    def __reduce__(self):
        return (ConfigErrors, (self.errors,))


class Collector:
    """Accumulates errors while a document is parsed."""

    def __init__(self) -> None:
        self.errors: list[ConfigError] = []

    def add(self, err: ConfigError) -> None:
        if isinstance(err, ConfigErrors):
            self.errors.extend(err.errors)
        else:
            self.errors.append(err)

    def error(self, path: Sequence[Any], message: str, hint: str = "", value: Any = None) -> None:
        self.add(ConfigError(path, message, hint, value))

    def guard(self, fn, *args, default=None, **kwargs):
        """Call ``fn``; on ``ConfigError`` record it and return ``default``."""
        try:
            return fn(*args, **kwargs)
        except ConfigError as e:
            self.add(e)
            return default

    def __bool__(self) -> bool:
        return bool(self.errors)

    def raise_if_any(self) -> None:
        if self.errors:
            raise ConfigErrors(self.errors)


class NotSupportedError(ConfigError):
    """A feature reserved for a later version: ``not yet supported: <path> (<what>)``."""

    HINT = "remove it for now; it is reserved for a later ccbench version"

    def __init__(self, path: Sequence[Any], what: str, value: Any = None, *,
                 source: str | None = None, line: int | None = None):
        self.what = what
        super().__init__(path, f"not yet supported: {format_path(path)} ({what})", self.HINT,
                         value, source=source, line=line)

    def __str__(self) -> str:  # the message already names the path
        return f"{self.message}; {self.hint}"

    def __reduce__(self):
        return (NotSupportedError, (self.path_parts, self.what, self.value),
                {"source": self.source, "line": self.line})


def not_supported(path: Sequence[Any], what: str, value: Any = None) -> ConfigError:
    return NotSupportedError(path, what, value)

"""YAML reading with line numbers.

The document is composed into nodes first so that every value's line is known (errors then
say ``experiment.yaml:7: flows[1].left-rate: ...``) and duplicate keys, which PyYAML would
silently collapse, are reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import ConfigError, ConfigErrors, show


@dataclass
class Source:
    """A parsed YAML document plus the line of every path in it."""

    data: Any
    name: str = "<string>"
    lines: dict[tuple, int] = field(default_factory=dict)

    def line_of(self, path: tuple) -> int | None:
        """Line of ``path``, or of its closest ancestor present in the document."""
        p = tuple(path)
        while True:
            if p in self.lines:
                return self.lines[p]
            if not p:
                return None
            p = p[:-1]

    def locate(self, err: ConfigError) -> ConfigError:
        """Fill in ``source``/``line`` of ``err`` (and of each error in a ConfigErrors)."""
        errs = err.errors if isinstance(err, ConfigErrors) else [err]
        for e in errs:
            if e.source is None:
                e.source = self.name
            if e.line is None:
                e.line = self.line_of(e.path_parts)
        if isinstance(err, ConfigErrors):
            err.source, err.line = errs[0].source, errs[0].line
        return err


def _walk(node: yaml.Node, path: tuple, lines: dict, errors: list) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if key is None:
                continue
            if key in seen:
                errors.append(ConfigError(
                    path + (key,), f"duplicate key {show(key)}",
                    f"it is already set on line {seen[key]}; keep one of them",
                    line=key_node.start_mark.line + 1))
            seen[key] = key_node.start_mark.line + 1
            _walk(value_node, path + (key,), lines, errors)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, path + (i,), lines, errors)


def parse_yaml(text: str, name: str = "<string>") -> Source:
    """Parse YAML text. Syntax errors and duplicate keys raise :class:`ConfigErrors`."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        problem = e.problem or e.context or "invalid YAML"
        where = f"line {line}, column {col}" if line else "unknown position"
        raise ConfigErrors([ConfigError((), f"YAML syntax error at {where}: {problem}",
                                        "check the indentation, colons and quoting there "
                                        "(quote values that start with special characters)",
                                        source=name, line=line)]) from None
    except yaml.YAMLError as e:
        raise ConfigErrors([ConfigError((), f"YAML syntax error: {e}", "", source=name)]) from None
    finally:
        loader.dispose()
    lines: dict[tuple, int] = {}
    errors: list[ConfigError] = []
    if node is not None:
        _walk(node, (), lines, errors)
    src = Source(data, name, lines)
    if errors:
        for e in errors:
            e.source = name
        raise ConfigErrors(errors)
    return src


def read_yaml(path) -> Source:
    name = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigErrors([ConfigError((), f"cannot read {name}: {e.strerror or e}",
                                        "check the file name", name, source=name)]) from None
    return parse_yaml(text, name)

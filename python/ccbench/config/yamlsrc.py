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


#: libyaml's loader when PyYAML was built with it (about 10x faster), else the Python one;
#: both give the same nodes, marks and errors.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: Deepest nesting of mappings/lists accepted (real experiment files stay under ~10).
MAX_DEPTH = 64
#: Most nodes a document may hold once every alias is expanded (a 100 000-point inline
#: series is ~300 000 nodes).
MAX_NODES = 2_000_000
#: Largest YAML text read (experiment and campaign files; traces are read elsewhere).
MAX_BYTES = 64 * 1024 * 1024


def _shape_error(name: str, line: int | None, message: str, hint: str) -> ConfigErrors:
    return ConfigErrors([ConfigError((), message, hint, source=name, line=line)])


def _check_depth(text: str, name: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH from the event stream (PyYAML's composer and
    everything after it recurse once per level). Syntax errors are left to the composer."""
    depth = 0
    try:
        for ev in yaml.parse(text, Loader=_LOADER):
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _shape_error(
                        name, ev.start_mark.line + 1,
                        f"the document nests deeper than {MAX_DEPTH} levels",
                        "an experiment file needs only a few levels; check for runaway "
                        "brackets or indentation")
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return


def _check_size(root: yaml.Node, name: str) -> None:
    """Count the nodes the document has with every alias expanded, without expanding it
    (each distinct node is visited once; its expanded size is memoised). Refuses a
    self-referencing alias and more than MAX_NODES nodes."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            total = 1
            if isinstance(node, yaml.MappingNode):
                total += sum(size[id(k)] + size[id(v)] for k, v in node.value)
            elif isinstance(node, yaml.SequenceNode):
                total += sum(size[id(c)] for c in node.value)
            size[key] = total
            if total > MAX_NODES:
                raise _shape_error(
                    name, node.start_mark.line + 1,
                    f"the document expands to more than {MAX_NODES:,} values once its "
                    "aliases (*name) are expanded",
                    "aliases that repeat other aliases multiply (an alias bomb); write the "
                    "values out or use fewer levels of aliases")
            continue
        if key in size:
            continue
        if key in on_path:
            raise _shape_error(name, node.start_mark.line + 1,
                               "an alias (*name) refers to a value that contains it",
                               "a recursive document cannot be an experiment; remove the alias")
        on_path.add(key)
        stack.append((node, True))
        if isinstance(node, yaml.MappingNode):
            children = [c for kv in node.value for c in kv]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        for c in children:
            if id(c) not in size:
                if id(c) in on_path:
                    raise _shape_error(
                        name, node.start_mark.line + 1,
                        "an alias (*name) refers to a value that contains it",
                        "a recursive document cannot be an experiment; remove the alias")
                stack.append((c, False))


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
    """Parse YAML text. Syntax errors, duplicate keys, nesting deeper than MAX_DEPTH and
    alias expansion beyond MAX_NODES raise :class:`ConfigErrors`."""
    if len(text) > MAX_BYTES:
        raise _shape_error(name, None, f"the file holds {len(text):,} characters, more than "
                           f"the {MAX_BYTES:,} an experiment file may have",
                           "put long series in a trace file (docs/network-conditions.md)")
    _check_depth(text, name)
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_size(node, name)
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


def read_text(path, what: str = "file") -> str:
    """The UTF-8 text of ``path``; a missing file, a directory, a device or FIFO, bytes that
    are not UTF-8 and an oversized file each raise a one-line :class:`ConfigErrors`."""
    import os
    import stat
    name = str(path)

    def fail(message: str, hint: str):
        return ConfigErrors([ConfigError((), message, hint, source=name)])

    try:
        st = os.stat(path)
    except OSError as e:
        raise fail(f"cannot read {what} {name}: {e.strerror or e}",
                   "check the file name") from None
    if stat.S_ISDIR(st.st_mode):
        raise fail(f"{name} is a directory, not a {what}", "give the YAML file inside it")
    if not stat.S_ISREG(st.st_mode):
        raise fail(f"{name} is not a regular file (a device, FIFO or socket)",
                   f"give a YAML {what} on disk")
    if st.st_size > MAX_BYTES:
        raise fail(f"{name} is {st.st_size:,} bytes, more than the {MAX_BYTES:,} a {what} "
                   "may have", "put long series in a trace file (docs/network-conditions.md)")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise fail(f"cannot read {what} {name}: {e.strerror or e}",
                   "check the file's permissions") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise ConfigErrors([ConfigError(
            (), f"{name} is not UTF-8 text (byte 0x{raw[e.start]:02x} on line {line})",
            "save the file as UTF-8; is it the right file?", source=name, line=line)]) from None


def read_yaml(path) -> Source:
    return parse_yaml(read_text(path), str(path))

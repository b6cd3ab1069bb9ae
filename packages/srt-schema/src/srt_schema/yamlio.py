"""YAML in and out: a bounded loader that yields plain data only, and a stable dumper.

Pure: text in, Python values out. The loader builds values from the parser's events itself
(libyaml's parser when PyYAML has it), so it can hold every document to the limits of
:data:`YAML_LIMITS` while it reads, and never builds anything but plain data: ``str``, ``int``,
``float``, ``bool``, ``None``, lists and mappings with string keys. A date, ``!!binary``,
``!!set``, ``!!python/...``, any other explicit tag, a non-string key, a self-referencing alias,
a duplicate key and a second document are refused with their ``$.path`` and line. An alias is
a copy of its anchor (editing one never edits the other), and what aliases expand to counts
against the node budget, so a ``billion laughs`` document of a few hundred bytes is refused
after at most ``expanded_nodes`` nodes were built.

Errors are RecipeErrors naming the file, the ``$.path``, the line, the value (shortened) and the
fix.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import msgspec
import yaml

from srt_schema.errors import Issue, RecipeError
from srt_schema.structural import join_path

__all__ = [
    "YAML_LIMITS",
    "YamlLimit",
    "check_plain_yaml",
    "decode_yaml_bytes",
    "dump_yaml",
    "parse_yaml",
    "parse_yaml_value",
]


class YamlLimit(msgspec.Struct, frozen=True, kw_only=True):
    """One bound the loader holds every document to."""

    maximum: int
    #: What is counted, for messages (``characters in the document``).
    counts: str


#: The loader's limits, by name (each message names the limit and its value). A recipe of the
#: public corpus is at most a few hundred nodes and 10 levels deep; these leave room for 100x.
YAML_LIMITS: dict[str, YamlLimit] = {
    "document_size": YamlLimit(maximum=4 * 1024 * 1024, counts="characters in the document"),
    "scalar_length": YamlLimit(maximum=1024 * 1024, counts="characters in one value"),
    "depth": YamlLimit(maximum=64, counts="levels of nested lists and mappings"),
    "expanded_nodes": YamlLimit(
        maximum=100_000, counts="values once every alias is expanded (aliases count in full)"
    ),
    "expanded_text": YamlLimit(
        maximum=16 * 1024 * 1024,
        counts="characters of values once every alias is expanded",
    ),
}

#: At most this many type issues (dates, tags, keys) are collected before the loader gives up.
_MAX_ISSUES = 20
#: Values are echoed up to this many characters.
_ECHO = 200

# libyaml's parser when PyYAML was built with it (the wheels are), else the pure-Python one.
_Loader: type[yaml.SafeLoader] = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader  # type: ignore[assignment]

_Y = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_Y + t for t in ("str", "int", "float", "bool", "null"))
_SEQ, _MAP, _MERGE, _TIMESTAMP = (_Y + t for t in ("seq", "map", "merge", "timestamp"))
_VALUE = _Y + "value"  # the YAML 1.1 ``=`` value key: read as the string "="

#: What each non-plain tag is, for messages.
_NOT_PLAIN: dict[str, str] = {
    _Y + "binary": "binary data",
    _Y + "set": "a set",
    _Y + "omap": "an ordered mapping",
    _Y + "pairs": "a list of pairs",
    _TIMESTAMP: "a date",
}


class _RefusedError(Exception):
    """A limit or a rule the document breaks (turned into an Issue by the caller)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class _YamlSyntaxError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _echo(text: str, limit: int = _ECHO) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_Y) :] if tag.startswith(_Y) else tag


def _at(mark: Any) -> str:
    return f"line {mark.line + 1}" if mark is not None else "unknown line"


def _over(name: str, count: int, *, fix: str) -> str:
    limit = YAML_LIMITS[name]
    return (
        f"the document has more than {limit.maximum} {limit.counts} ({count} so far; limit "
        f"{name} = {limit.maximum}); {fix}"
    )


class _Frame:
    """A list or mapping being built."""

    __slots__ = (
        "anchor",
        "is_map",
        "items",
        "key",
        "lines",
        "mark",
        "merged",
        "nodes",
        "path",
        "text",
    )

    def __init__(
        self, *, is_map: bool, path: str, anchor: str | None, mark: Any, nodes: int, text: int
    ) -> None:
        self.is_map = is_map
        self.path = path
        self.anchor = anchor
        self.mark = mark
        self.items: Any = {} if is_map else []
        self.key: Any = None  # a mapping's key waiting for its value (a str or _MERGE_KEY)
        self.lines: dict[str, int] = {}  # each key's line, for duplicate keys
        self.merged: list[dict[str, Any]] = []  # `<<:` mappings, first one wins
        self.nodes = nodes  # the budget counters when the frame opened
        self.text = text

    def child_path(self) -> str:
        if not self.is_map:
            return join_path(self.path, len(self.items))
        if self.key is None:
            return f"{self.path} (a key)"
        return join_path(self.path, "<<" if self.key is _MERGE_KEY else self.key)


class _Anchor(msgspec.Struct, frozen=True):
    value: Any
    nodes: int
    text: int
    depth: int


def _depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth_of(v) for v in value), default=0)
    return 0


class _Builder:
    """Plain data from a stream of parser events, within YAML_LIMITS."""

    def __init__(self, loader: Any, base: str, *, duplicates: bool = True) -> None:
        self.loader = loader
        self.base = base
        self.duplicates = duplicates
        self.stack: list[_Frame] = []
        self.anchors: dict[str, _Anchor] = {}
        self.nodes = 0
        self.text = 0
        self.issues: list[tuple[str, str]] = []
        self.root: Any = None
        self.documents = 0

    # -- budget ---------------------------------------------------------------------------------
    def count(self, nodes: int, text: int, path: str) -> None:
        self.nodes += nodes
        self.text += text
        if self.nodes > YAML_LIMITS["expanded_nodes"].maximum:
            raise _RefusedError(
                path,
                _over(
                    "expanded_nodes",
                    self.nodes,
                    fix="an alias (*name) repeats its anchor in full; write the values once",
                ),
            )
        if self.text > YAML_LIMITS["expanded_text"].maximum:
            raise _RefusedError(
                path,
                _over(
                    "expanded_text",
                    self.text,
                    fix="an alias (*name) repeats its anchor in full; write the values once",
                ),
            )

    def problem(self, path: str, message: str) -> None:
        self.issues.append((path, message))
        if len(self.issues) >= _MAX_ISSUES:
            raise _RefusedError(path, message)

    def path(self) -> str:
        return self.stack[-1].child_path() if self.stack else self.base

    # -- events ---------------------------------------------------------------------------------
    def run(self) -> Any:
        loader = self.loader
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.DocumentStartEvent):
                self.documents += 1
                if self.documents > 1:
                    raise _RefusedError(
                        self.base,
                        f"a second YAML document starts at {_at(event.start_mark)}; a recipe is "
                        "one document: remove the `---` or split the file",
                    )
            elif isinstance(event, yaml.ScalarEvent):
                self.scalar(event)
            elif isinstance(event, yaml.AliasEvent):
                self.alias(event)
            elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                self.open(event)
            elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                self.close()
        return self.root

    def open(self, event: Any) -> None:
        is_map = isinstance(event, yaml.MappingStartEvent)
        path = self.path()
        tag = event.tag
        if tag not in (None, "!", _MAP if is_map else _SEQ):
            self.problem(path, self.tag_message(tag, "", event))
        if len(self.stack) + 1 > YAML_LIMITS["depth"].maximum:
            limit = YAML_LIMITS["depth"]
            raise _RefusedError(
                path,
                f"nested more than {limit.maximum} levels deep at {_at(event.start_mark)} "
                f"(limit depth = {limit.maximum}); flatten the value",
            )
        self.count(1, 0, path)
        frame = _Frame(
            is_map=is_map,
            path=path,
            anchor=event.anchor,
            mark=event.start_mark,
            nodes=self.nodes - 1,
            text=self.text,
        )
        self.stack.append(frame)

    def close(self) -> None:
        frame = self.stack.pop()
        value = frame.items
        if frame.is_map and frame.merged:
            merged: dict[str, Any] = {}
            for extra in reversed(frame.merged):
                merged.update(extra)
            merged.update(value)
            value = merged
        if frame.anchor is not None:
            self.anchors[frame.anchor] = _Anchor(
                value=value,
                nodes=self.nodes - frame.nodes,
                text=self.text - frame.text,
                depth=_depth_of(value),
            )
        self.deliver(value, mark=frame.mark, source=None)

    def alias(self, event: Any) -> None:
        path = self.path()
        name = event.anchor
        if any(frame.anchor == name for frame in self.stack):
            raise _RefusedError(
                path,
                f"the alias *{_echo(name)} at {_at(event.start_mark)} refers to the value it is "
                "part of (a self-referencing alias); write the value out instead",
            )
        anchor = self.anchors.get(name)
        if anchor is None:
            raise _RefusedError(
                path,
                f"the alias *{_echo(name)} at {_at(event.start_mark)} names no anchor defined "
                f"above it; define &{_echo(name)} first",
            )
        if len(self.stack) + anchor.depth > YAML_LIMITS["depth"].maximum:
            limit = YAML_LIMITS["depth"]
            raise _RefusedError(
                path,
                f"the alias *{_echo(name)} nests more than {limit.maximum} levels deep at "
                f"{_at(event.start_mark)} (limit depth = {limit.maximum}); flatten the value",
            )
        self.count(anchor.nodes, anchor.text, path)
        value = anchor.value
        if isinstance(value, dict | list):
            value = copy.deepcopy(value)
        self.deliver(value, mark=event.start_mark, source=f"*{name}")

    def scalar(self, event: Any) -> None:
        path = self.path()
        text: str = event.value
        limit = YAML_LIMITS["scalar_length"]
        if len(text) > limit.maximum:
            raise _RefusedError(
                path,
                f"a value of {len(text)} characters at {_at(event.start_mark)} (limit "
                f"scalar_length = {limit.maximum}); keep long text in a file and name its path",
            )
        self.count(1, len(text), path)
        value = self.construct(event, path)
        if event.anchor is not None:
            self.anchors[event.anchor] = _Anchor(value=value, nodes=1, text=len(text), depth=0)
        self.deliver(value, mark=event.start_mark, source=text)

    def construct(self, event: Any, path: str) -> Any:
        text: str = event.value
        tag = event.tag
        if tag is None:
            tag = self.loader.resolve(yaml.ScalarNode, text, event.implicit)
        elif tag == "!":
            tag = _STR
        node = yaml.ScalarNode(tag, text)
        if tag in (_STR, _VALUE):
            return text
        if tag == _MERGE:
            top = self.stack[-1] if self.stack else None
            in_key = top is not None and top.is_map and top.key is None
            return _MERGE_KEY if in_key and event.tag is None else text
        try:
            if tag == _INT:
                return self.loader.construct_yaml_int(node)
            if tag == _FLOAT:
                return self.loader.construct_yaml_float(node)
            if tag == _BOOL:
                return self.loader.construct_yaml_bool(node)
            if tag == _NULL:
                return None
        except (ValueError, KeyError):
            # an integer longer than Python converts (sys.int_info.str_digits_check_threshold),
            # or an explicit !!int / !!float / !!bool tag on text that is not one
            self.problem(
                path,
                f"{_echo(text, 60)!r} ({len(text)} characters, {_at(event.start_mark)}) does "
                f"not read as {_short_tag(tag)}; quote it to keep it as text",
            )
            return None
        if tag == _TIMESTAMP and event.tag is None:
            self.problem(
                path,
                f"YAML reads {_echo(text)} as a date ({_at(event.start_mark)}); quote it: "
                f'"{_echo(text)}"',
            )
            return text
        self.problem(path, self.tag_message(tag, text, event))
        return text

    def tag_message(self, tag: str, text: str, event: Any) -> str:
        what = _NOT_PLAIN.get(tag)
        shown = _echo(_short_tag(tag))
        where = _at(event.start_mark)
        if what is not None:
            return (
                f"the tag {shown} at {where} makes {what}, which a recipe cannot hold; "
                "remove the tag (quote the value for text, write a list for a set)"
            )
        return (
            f"unknown tag {shown} at {where}; a recipe holds plain values only "
            "(text, numbers, true/false, null, lists, mappings): remove the tag"
        )

    def deliver(self, value: Any, *, mark: Any, source: str | None) -> None:
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        if not frame.is_map:
            frame.items.append(value)
            return
        if frame.key is None:
            self.take_key(frame, value, mark=mark, source=source)
            return
        key, frame.key = frame.key, None
        if key is _MERGE_KEY:
            self.merge(frame, value)
        else:
            frame.items[key] = value

    def take_key(self, frame: _Frame, key: Any, *, mark: Any, source: str | None) -> None:
        if key is _MERGE_KEY:
            frame.key = _MERGE_KEY
            return
        line = mark.line + 1 if mark is not None else 0
        if not isinstance(key, str):
            if not isinstance(key, dict | list):
                shown = _echo(source if source is not None else repr(key))
                kind = {bool: "true/false", int: "an integer", float: "a number"}.get(
                    type(key), "null"
                )
                reads = f"YAML reads the key {shown} as {kind}"
            else:
                reads = "a key is a " + ("mapping" if isinstance(key, dict) else "list")
            self.problem(frame.path, f"keys must be strings; {reads} (line {line}): quote it")
            key = f"\x00{len(frame.items)}"  # a placeholder, never returned (an issue exists)
        first = frame.lines.get(key) if self.duplicates else None
        if first is not None:
            column = mark.column + 1 if mark is not None else 1
            raise _RefusedError(
                frame.path,
                f"invalid YAML at line {line}, column {column}: duplicate key "
                f"{_echo(repr(key))} (first on line {first}, again on line {line}); keep one "
                "of them",
            )
        frame.key = key
        frame.lines[key] = line

    def merge(self, frame: _Frame, value: Any) -> None:
        sources = value if isinstance(value, list) else [value]
        for source in sources:
            if not isinstance(source, dict):
                self.problem(
                    join_path(frame.path, "<<"),
                    "a merge key (<<) takes a mapping or a list of mappings (*anchor); "
                    "give it an alias of a mapping",
                )
                return
            frame.merged.append(source)


#: The ``<<`` merge key (a sentinel object: no parsed key is identical to it).
_MERGE_KEY: Any = object()


def _run(text: str, *, base: str, file: str, duplicates: bool = True) -> tuple[Any, bool]:
    """The plain value of ``text`` and whether it held a document; raises on any problem
    (a duplicate key too, unless ``duplicates`` is False)."""
    limit = YAML_LIMITS["document_size"]
    if len(text) > limit.maximum:
        raise RecipeError.single(
            file,
            base,
            f"the document has {len(text)} characters (limit document_size = "
            f"{limit.maximum}); a recipe is far smaller: is this the right file?",
        )
    loader = _Loader(text)
    builder = _Builder(loader, base, duplicates=duplicates)
    try:
        value = builder.run()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        problem = exc.problem or str(exc)
        raise _YamlSyntaxError(f"invalid YAML at {where}: {_echo(problem)}") from exc
    except yaml.YAMLError as exc:
        raise _YamlSyntaxError(f"invalid YAML: {_echo(str(exc))}") from exc
    except _RefusedError as exc:
        builder.issues.append((exc.path, exc.message))
    finally:
        loader.dispose()
    if builder.issues:
        raise RecipeError(
            Issue(file=file, path=path, message=message)
            for path, message in dict.fromkeys(builder.issues)
        )
    return value, builder.documents > 0


def parse_yaml(text: str, *, file: str) -> Any:
    """Parse one YAML document into plain data; an empty document is an error."""
    try:
        value, _ = _run(text, base="$", file=file)
    except _YamlSyntaxError as exc:
        raise RecipeError.single(file, "$", exc.message) from exc
    if value is None:
        raise RecipeError.single(file, "$", "the file is empty; a recipe is a YAML mapping")
    return value


def parse_yaml_value(
    text: str, *, file: str, path: str, on_syntax_error: Callable[[str], Any] | None = None
) -> Any:
    """One YAML value (a ``--set`` value) as plain data; problems are reported at ``path``.

    An empty text is ``None``. When the text does not parse, ``on_syntax_error(message)`` gives
    the value (``--set`` keeps such text as a string), else it is a RecipeError.
    """
    try:
        value, _ = _run(text, base=path, file=file)
    except _YamlSyntaxError as exc:
        if on_syntax_error is not None:
            return on_syntax_error(exc.message)
        raise RecipeError.single(file, path, exc.message) from exc
    return value


def check_plain_yaml(text: str, *, file: str) -> tuple[Issue, ...]:
    """The issues of ``text`` against YAML_LIMITS and the plain-data rules, for a caller that
    parses it with another YAML library (the migration's round-trip loader): syntax errors and
    duplicate keys are left to that library's own messages."""
    try:
        _run(text, base="$", file=file, duplicates=False)
    except _YamlSyntaxError:
        return ()
    except RecipeError as exc:
        return exc.issues
    return ()


def decode_yaml_bytes(data: bytes, *, file: str) -> str:
    """The text of a YAML file's bytes: UTF-8 (a byte order mark is dropped), else a RecipeError
    naming the first bad byte and its offset."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        line = data.count(b"\n", 0, exc.start) + 1
        raise RecipeError.single(
            file,
            "$",
            f"not UTF-8 text: byte 0x{bad} at offset {exc.start} (line {line}) "
            f"{exc.reason}; save the file as UTF-8",
        ) from exc
    return text.removeprefix("\ufeff")


class _Dumper(yaml.SafeDumper):
    """Block style, keys in insertion order, no aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(tuple, yaml.SafeDumper.represent_list)


def dump_yaml(value: Any) -> str:
    """Deterministic YAML text for a plain value (dicts keep their order)."""
    return yaml.dump(value, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=100)

"""Round-trip YAML plumbing for the migration: load, dump, and comment-carrying key moves.

ruamel.yaml is an optional extra (``srt-schema[migrate]``), so it is imported lazily here and
nowhere else. ruamel keeps a full-line comment as the tail of the *previous* value's comment, which
would make a moved key drag the next key's comments along. ``normalize_comments`` therefore first
re-homes every full-line comment onto the key it stands above (``ca.items[key][1]``); after that a
key's comments are exactly its own entry (lines above it, end-of-line comment), and ``pop_key`` /
``put_key`` move them with the key.
"""

from __future__ import annotations

import re
from copy import deepcopy
from itertools import pairwise
from typing import Any

from srt_schema.errors import MigrationError
from srt_schema.yamlio import YAML_LIMITS, check_plain_yaml

__all__ = [
    "Moved",
    "dump_document",
    "is_flow",
    "is_map",
    "is_seq",
    "load_document",
    "mapping_indent",
    "new_map",
    "new_seq",
    "normalize_comments",
    "pop_key",
    "put_key",
    "replace_scalar",
    "set_above",
    "shift_comments",
    "split_document_header",
    "to_plain",
]

_MISSING_EXTRA = "migration needs ruamel.yaml: pip install 'srt-schema[migrate]'"


def _ruamel() -> Any:
    try:
        import ruamel.yaml as ry
    except ImportError:  # pragma: no cover - exercised only without the extra
        return None
    return ry


def _make_yaml(text: str, file: str) -> Any:
    ry = _ruamel()
    if ry is None:
        raise MigrationError(file, _MISSING_EXTRA)
    yaml = ry.YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    mapping, sequence, offset = _detect_indent(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    # write an explicit `null` (ruamel's round-trip default is an empty value)
    yaml.representer.add_representer(type(None), _represent_null)
    return yaml


def _represent_null(representer: Any, _: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "null")


_KEY_LINE = re.compile(r"^(\s*)(?:- )?[^\s#-][^:#]*:\s*(?:#.*)?$")
_DASH_LINE = re.compile(r"^(\s*)- ")
_CHILD_LINE = re.compile(r"^(\s*)[^\s#-]")


def _detect_indent(text: str) -> tuple[int, int, int]:
    """Guess the file's mapping indent and block-sequence style, so untouched parts keep them."""
    lines = text.splitlines()
    mapping = 2
    for prev, line in pairwise(lines):
        key = _KEY_LINE.match(prev)
        child = _CHILD_LINE.match(line)
        if key and child and len(child.group(1)) > len(key.group(1)):
            mapping = len(child.group(1)) - len(key.group(1))
            break
    for prev, line in pairwise(lines):
        key = _KEY_LINE.match(prev)
        dash = _DASH_LINE.match(line)
        if key and dash and not prev.lstrip().startswith("- "):
            offset = len(dash.group(1)) - len(key.group(1))
            if offset >= 0:
                return mapping, offset + 2, offset
    return mapping, mapping + 2, mapping


def mapping_indent(text: str) -> int:
    """The number of spaces the file indents a nested mapping by (2 when it cannot tell)."""
    return _detect_indent(text)[0]


def load_document(text: str, file: str) -> tuple[Any, Any]:
    """Parse ``text`` into a comment-preserving mapping; returns ``(yaml, document)``.

    The recipe loader's limits and plain-data rules come first (ruamel would expand an alias
    bomb, recurse on deep nesting and build dates), then ruamel reads the text.
    """
    issues = check_plain_yaml(text, file=file)
    if issues:
        raise MigrationError(
            file,
            "; ".join(f"{i.path}: {i.message}" if i.path != "$" else i.message for i in issues),
        )
    yaml = _make_yaml(text, file)
    ry = _ruamel()
    try:
        document = yaml.load(text)
    except ry.constructor.DuplicateKeyError as exc:
        raise MigrationError(file, _duplicate_key_message(exc)) from exc
    except RecursionError as exc:  # nesting libyaml refuses as a syntax error (over 1000 levels)
        depth = YAML_LIMITS["depth"].maximum
        raise MigrationError(
            file, f"YAML nested too deeply to read (limit depth = {depth}); flatten the value"
        ) from exc
    except ry.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MigrationError(file, f"YAML does not parse: {first}{_where(exc)}") from exc
    if document is None:
        raise MigrationError(file, "YAML file is empty; nothing to migrate")
    if not is_map(document):
        raise MigrationError(
            file, f"top-level YAML must be a mapping, got {type(document).__name__}"
        )
    return yaml, document


def _where(exc: Any) -> str:
    mark = getattr(exc, "problem_mark", None)
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def _duplicate_key_message(exc: Any) -> str:
    problem = str(getattr(exc, "problem", "") or "")
    found = re.search(r'duplicate key "([^"]*)"', problem)
    key = found.group(1) if found else "?"
    mark = getattr(exc, "problem_mark", None)
    first = getattr(exc, "context_mark", None)
    line = f"line {mark.line + 1}" if mark is not None else "unknown line"
    where = f" (the mapping starts at line {first.line + 1})" if first is not None else ""
    return f"duplicate key {key!r} at {line}{where}; keep one of the two entries"


def dump_document(yaml: Any, document: Any) -> str:
    from io import StringIO

    buffer = StringIO()
    yaml.dump(document, buffer)
    return buffer.getvalue()


def is_map(value: object) -> bool:
    ry = _ruamel()
    return isinstance(value, dict) or (ry is not None and isinstance(value, ry.CommentedMap))


def is_seq(value: object) -> bool:
    return isinstance(value, list)


def new_map(items: dict[str, Any] | None = None) -> Any:
    ry = _ruamel()
    mapping = ry.CommentedMap()
    for key, value in (items or {}).items():
        mapping[key] = value
    return mapping


def new_seq(items: list[Any], *, flow: bool = False) -> Any:
    ry = _ruamel()
    seq = ry.CommentedSeq(items)
    if flow:
        seq.fa.set_flow_style()
    return seq


def is_flow(value: Any) -> bool:
    """Whether a ruamel collection is written in flow style (``[a, b]`` / ``{a: 1}``)."""
    return bool(value.fa.flow_style())


def replace_scalar(mapping: Any, key: str, value: Any) -> None:
    """Set ``mapping[key]`` and shift its end-of-line comment so the gap before it is kept."""
    old = mapping[key]
    mapping[key] = value
    entry = mapping.ca.items.get(key)
    token = entry[2] if entry else None
    if token is not None and token.start_mark is not None and isinstance(old, str):
        shift = len(str(value)) - len(old)
        token.start_mark.column = max(0, int(token.start_mark.column) + shift)


def to_plain(value: Any) -> Any:
    """A deep copy with plain dicts, lists and scalars (for facts that must not change)."""
    if is_map(value):
        return {str(k): to_plain(v) for k, v in value.items()}
    if is_seq(value):
        return [to_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return deepcopy(value)


# --------------------------------------------------------------------------- comment plumbing


class Moved:
    """A key taken out of a mapping, with the comments that belong to it."""

    __slots__ = ("above", "eol", "value")

    def __init__(self, value: Any, eol: Any, above: list[str]) -> None:
        self.value = value
        self.eol = eol  # ruamel's end-of-line comment token, or None
        self.above = above  # comment lines right above the key ("" for a blank line)


def _token_text(token: Any) -> str:
    return str(token.value) if token is not None else ""


def _make_token(text: str, column: int) -> Any:
    ry = _ruamel()
    return ry.tokens.CommentToken(text, ry.error.CommentMark(column))


def _split_trailing(text: str) -> tuple[str | None, list[str]]:
    """A trailing token is ``[eol comment]\\n[full lines]``: split it into the two parts."""
    if text.startswith("#"):
        eol, _, rest = text.partition("\n")
    else:
        eol, rest = None, text[1:] if text.startswith("\n") else text
    lines = rest.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return eol, [line.strip() for line in lines]


def _entries(node: Any, out: list[tuple[Any, Any, Any]], parent: Any) -> None:
    """(container, key, parent entry) for every mapping key and sequence item, in text order."""
    if isinstance(node, dict):
        for key, value in node.items():
            out.append((node, key, parent))
            _entries(value, out, (node, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.append((node, index, parent))
            _entries(value, out, (node, index))


def _before_tokens(lines: list[str], column: int) -> list[Any]:
    return [_make_token(f"{line}\n" if line else "\n", column if line else 0) for line in lines]


def _prepend_above(mapping: Any, key: Any, lines: list[str], column: int) -> None:
    entry = mapping.ca.items.setdefault(key, [None, None, None, None])
    tokens = _before_tokens(lines, column)
    entry[1] = tokens + list(entry[1] or [])


def _column_of(container: Any, key: Any) -> int:
    data: Any = getattr(container, "lc", None)
    if data is None:
        return 0
    try:
        return int(data.key(key)[1]) if isinstance(container, dict) else int(data.item(key)[1])
    except (AttributeError, KeyError, TypeError, IndexError):
        return 0


def normalize_comments(document: Any) -> list[str]:
    """Re-home every full-line comment onto the key it stands above; returns the file's tail.

    After this, a key's comments live in its own ``ca.items[key]`` entry (slot 1: lines above,
    slot 2: end of line), so moving the key moves exactly its comments. The comment lines after
    the document's last value are returned (and removed) so the caller can append them verbatim.
    """
    entries: list[tuple[Any, Any, Any]] = []
    _entries(document, entries, None)
    # headers of nested mappings: comments above their first key
    for container, key, _parent in entries:
        value = container[key]
        if is_map(value) and len(value):
            header = value.ca.comment
            if header and len(header) > 1 and header[1]:
                first = next(iter(value))
                lines = _split_trailing("\n" + "".join(_token_text(t) for t in header[1]))[1]
                _prepend_above(value, first, lines, _column_of(value, first))
                header[1] = None
            parent_entry = container.ca.items.get(key)
            if parent_entry and len(parent_entry) > 3:
                parent_entry[3] = None
    tail: list[str] = []
    for position, (container, key, _parent) in enumerate(entries):
        slot = 0 if isinstance(container, list) else 2
        entry = container.ca.items.get(key)
        if not entry or entry[slot] is None:
            continue
        token = entry[slot]
        eol, lines = _split_trailing(_token_text(token))
        if not lines:
            continue
        following = entries[position + 1] if position + 1 < len(entries) else None
        if following is not None and not isinstance(following[0], dict):
            continue  # a comment between sequence items stays where it is
        column = int(token.start_mark.column) if token.start_mark is not None else 0
        entry[slot] = _make_token(f"{eol}\n", column) if eol is not None else None
        if following is None:
            tail = lines
        else:
            target, target_key, _ = following
            _prepend_above(target, target_key, lines, _column_of(target, target_key))
    return tail


def pop_key(mapping: Any, key: str) -> Moved:
    """Remove ``key`` from ``mapping`` together with its comments (see ``normalize_comments``)."""
    value = mapping.pop(key)
    entry = mapping.ca.items.pop(key, None) or [None, None, None, None]
    above = [_token_text(t).strip() for t in (entry[1] or [])]
    return Moved(value, entry[2], above)


def put_key(
    mapping: Any,
    key: str,
    value: Any,
    *,
    index: int | None = None,
    moved: Moved | None = None,
    indent: int = 0,
) -> None:
    """Insert ``key`` at ``index`` (default: the end), carrying the comments of ``moved``.

    ``indent`` is the column of this mapping's keys, used for the comment lines above the key.
    """
    if key in mapping:
        mapping.pop(key)
    position = len(mapping) if index is None else max(0, min(index, len(mapping)))
    mapping.insert(position, key, value)
    if moved is None:
        return
    above = list(moved.above)
    while position == 0 and above and not above[0]:
        above.pop(0)  # no blank line right after the parent key
    entry = [None, _before_tokens(above, indent) or None, moved.eol, None]
    mapping.ca.items[key] = entry


def shift_comments(value: Any, delta: int) -> None:
    """Move every comment inside ``value`` ``delta`` columns right (the block moved deeper)."""
    if not delta or not (is_map(value) or is_seq(value)):
        return
    for entry in value.ca.items.values():
        for part in entry:
            tokens = part if isinstance(part, list) else [part]
            for token in tokens:
                if token is not None and getattr(token, "start_mark", None) is not None:
                    token.start_mark.column = max(0, int(token.start_mark.column) + delta)
    children = value.values() if is_map(value) else value
    for child in children:
        shift_comments(child, delta)


def split_document_header(document: Any) -> list[str]:
    """Detach the comment block right above the first key (after the file's last blank line).

    Returns its lines; what comes before the blank line stays the file header.
    """
    header = document.ca.comment
    if not header or len(header) < 2 or not header[1]:
        return []
    tokens = list(header[1])
    cut = max((i + 1 for i, t in enumerate(tokens) if _token_text(t).endswith("\n\n")), default=0)
    if cut == 0:
        return []
    header[1] = tokens[:cut]
    return [_token_text(t).strip() for t in tokens[cut:] if _token_text(t).strip()]


def set_above(mapping: Any, key: str, lines: list[str], indent: int = 0) -> None:
    """Put comment lines right above ``mapping[key]``."""
    if lines:
        _prepend_above(mapping, key, lines, indent)

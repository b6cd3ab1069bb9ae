"""Streaming parser for the Prometheus text exposition format (version 0.0.4).

Hot path: a scraper parses every exporter body every interval, so the parser is line-oriented and
built on `str` methods (`find`, `rfind`, `split`) rather than a regular expression per line. Label
sets are parsed once and memoised: exporters serve the same label sets on every scrape, so after
the first scrape each label set costs one dictionary lookup. The memo is bounded
(`_LABEL_CACHE_LIMIT` entries) and cleared when full.

`parse_text` takes a whole body; `StreamParser` takes it in chunks (as an HTTP body arrives) and
yields the same result. Comment lines other than `# TYPE` are skipped; `# TYPE` lines fill
`ParsedText.types` (family name -> type). Values accept the Prometheus spellings `NaN`, `+Inf`,
`-Inf`; an optional integer timestamp (ms) after the value is kept in `timestamps_ms`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from srt_telemetry.errors import ParseError

__all__ = ["Labels", "ParsedText", "StreamParser", "parse_labels", "parse_text"]

Labels = tuple[tuple[str, str], ...]

_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_CACHE_LIMIT = 200_000
_label_cache: dict[str, Labels] = {"": ()}
_name_ok: set[str] = set()
_head_cache: dict[str, tuple[str, Labels]] = {}


@dataclass(slots=True)
class ParsedText:
    """Parsed samples as parallel lists (one entry per sample line, in body order)."""

    names: list[str] = field(default_factory=list)
    labels: list[Labels] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)
    timestamps_ms: dict[int, int] = field(default_factory=dict)  # sample index -> timestamp

    def __len__(self) -> int:
        return len(self.names)


def _unescape(raw: str) -> str:
    out: list[str] = []
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            out.append("\n" if nxt == "n" else nxt if nxt in '\\"' else "\\" + nxt)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
_VALUE = r'[^"\\]*(?:\\.[^"\\]*)*'
_ONE = rf'[ \t]*{_NAME}[ \t]*=[ \t]*"{_VALUE}"[ \t]*'
_LABEL_PAIR = re.compile(rf'({_NAME})[ \t]*=[ \t]*"({_VALUE})"')
_LABEL_TEXT = re.compile(rf"(?:{_ONE},)*(?:{_ONE},?)?[ \t]*")


def _parse_labels_uncached(text: str) -> Labels:
    """Two C-level regex passes (validate the whole text, then collect the pairs) when the label
    text is well formed; the careful loop `_parse_labels_slow` (which also produces the exact
    error message) otherwise."""
    if _LABEL_TEXT.fullmatch(text):
        pairs: list[tuple[str, str]] = _LABEL_PAIR.findall(text)
        if "\\" in text:
            pairs = [(k, _unescape(v) if "\\" in v else v) for k, v in pairs]
        return tuple(pairs)
    return _parse_labels_slow(text)


def _parse_labels_slow(text: str) -> Labels:
    out: list[tuple[str, str]] = []
    i = 0
    n = len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            break
        eq = text.find("=", i)
        if eq < 0:
            raise ValueError(f"label without '=' at {text[i:]!r}")
        key = text[i:eq].strip()
        if not _LABEL_NAME.fullmatch(key):
            raise ValueError(f"invalid label name {key!r}")
        q = eq + 1
        while q < n and text[q] in " \t":
            q += 1
        if q >= n or text[q] != '"':
            raise ValueError(f"label {key!r} value does not start with '\"'")
        j = q + 1
        while True:
            k = text.find('"', j)
            if k < 0:
                raise ValueError(f"label {key!r} value is not closed")
            b = k - 1
            while b > q and text[b] == "\\":
                b -= 1
            if (k - 1 - b) % 2 == 0:
                break
            j = k + 1
        raw = text[q + 1 : k]
        out.append((key, _unescape(raw) if "\\" in raw else raw))
        i = k + 1
        while i < n and text[i] in " \t":
            i += 1
        if i < n:
            if text[i] != ",":
                raise ValueError(f"expected ',' after label {key!r}, got {text[i]!r}")
            i += 1
    return tuple(out)


def parse_labels(text: str) -> Labels:
    """Parse the text between `{` and `}` into ((name, value), ...) in served order (memoised)."""
    hit = _label_cache.get(text)
    if hit is not None:
        return hit
    labels = _parse_labels_uncached(text)
    if len(_label_cache) >= _LABEL_CACHE_LIMIT:
        _label_cache.clear()
        _label_cache[""] = ()
    _label_cache[text] = labels
    return labels


def _check_name(name: str) -> None:
    if name not in _name_ok:
        if not _METRIC_NAME.fullmatch(name):
            raise ValueError(f"invalid metric name {name!r}")
        if len(_name_ok) < _LABEL_CACHE_LIMIT:
            _name_ok.add(name)


def _parse_lines(lines: list[str], out: ParsedText, first_lineno: int) -> None:
    names = out.names
    labels = out.labels
    values = out.values
    cache = _label_cache
    name_ok = _name_ok
    heads = _head_cache
    if len(heads) > _LABEL_CACHE_LIMIT:
        heads.clear()
    line = ""
    try:
        for line in lines:
            if not line:
                continue
            # fast path: the text before the last space was seen before as exactly
            # "<name>[{labels}]" followed by a single value token
            head, sep, val = line.rpartition(" ")
            hit = heads.get(head)
            if hit is not None:
                values.append(float(val))
                names.append(hit[0])
                labels.append(hit[1])
                continue
            if line[0] == "#":
                if line.startswith("# TYPE "):
                    parts = line.split(None, 3)
                    if len(parts) != 4:
                        raise ValueError("'# TYPE' needs a metric name and a type")
                    out.types[parts[2]] = parts[3].strip()
                continue
            b = line.find("{")
            if b >= 0:
                e = line.rfind("}")
                if e < b:
                    raise ValueError("'{' without a closing '}'")
                name = line[:b]
                lt = line[b + 1 : e]
                lab = cache.get(lt)
                if lab is None:
                    lab = parse_labels(lt)
                rest = line[e + 1 :]
            else:
                sp = line.find(" ")
                if sp < 0:
                    if line.isspace():
                        continue
                    raise ValueError("sample line has no value")
                name = line[:sp]
                lab = ()
                rest = line[sp:]
            if name not in name_ok:
                name = name.strip()
                _check_name(name)
            parts = rest.split()
            if len(parts) == 1:
                values.append(float(parts[0]))
                if sep and parts[0] == val:
                    heads[head] = (name, lab)
            elif len(parts) == 2:
                values.append(float(parts[0]))
                out.timestamps_ms[len(names)] = int(parts[1])
            else:
                raise ValueError(f"expected 'value [timestamp]' after the name, got {rest!r}")
            names.append(name)
            labels.append(lab)
    except ValueError as exc:
        lineno = first_lineno + lines.index(line)
        del names[len(labels) :]
        del values[len(labels) :]
        raise ParseError(f"line {lineno}: {exc}: {line[:200]!r}") from exc


def parse_text(text: str) -> ParsedText:
    """Parse a whole exposition body. Raises `ParseError` naming the first bad line."""
    out = ParsedText()
    _parse_lines(text.split("\n"), out, 1)
    return out


class StreamParser:
    """Incremental parser: `feed` chunks as they arrive, then `close` for the result."""

    __slots__ = ("_lineno", "_out", "_tail")

    def __init__(self) -> None:
        self._out = ParsedText()
        self._tail = ""
        self._lineno = 1

    def feed(self, chunk: str) -> None:
        data = self._tail + chunk
        cut = data.rfind("\n")
        if cut < 0:
            self._tail = data
            return
        lines = data[:cut].split("\n")
        self._tail = data[cut + 1 :]
        _parse_lines(lines, self._out, self._lineno)
        self._lineno += len(lines)

    def close(self) -> ParsedText:
        if self._tail:
            _parse_lines([self._tail], self._out, self._lineno)
            self._tail = ""
        return self._out


def is_finite(value: float) -> bool:
    """True for a finite float (helper shared by the power parsers)."""
    return math.isfinite(value)

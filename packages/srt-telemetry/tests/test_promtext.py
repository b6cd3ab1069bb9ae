from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telemetry_testkit import DATA, prometheus_parser

from srt_telemetry.errors import ParseError
from srt_telemetry.promtext import StreamParser, parse_labels, parse_text


def _ours(text: str) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
    """Our samples, with prometheus-client's one renaming applied: it reports a sample of a
    `counter` family served without the `_total` suffix as `<name>_total`."""
    p = parse_text(text)
    return [
        (
            n + "_total" if p.types.get(n) == "counter" and not n.endswith("_total") else n,
            tuple(sorted(lab)),
            v,
        )
        for n, lab, v in zip(p.names, p.labels, p.values, strict=False)
    ]


def _theirs(text: str) -> list[tuple[str, tuple[tuple[str, str], ...], float]]:
    parser = prometheus_parser()
    return [
        (s.name, tuple(sorted(s.labels.items())), s.value)
        for fam in parser.text_string_to_metric_families(text)
        for s in fam.samples
    ]


def _same(a: list, b: list) -> bool:  # type: ignore[type-arg]
    """Equal sample lists (NaN equals NaN); on a difference, fail naming the first one."""
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=False):
        (n1, l1, v1), (n2, l2, v2) = x, y
        same_value = v1 == v2 or (math.isnan(v1) and math.isnan(v2))
        assert (n1, l1, same_value) == (n2, l2, True), f"ours {x} != prometheus-client {y}"
    return True


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["dcgm-gb200.txt", "node-exporter-gb200.txt"])
def test_corpus_matches_prometheus_client(corpus: Path, name: str) -> None:
    text = (corpus / "metrics" / name).read_text()
    ours = _ours(text)
    assert len(ours) > 50
    assert _same(ours, _theirs(text))


@pytest.mark.parametrize(
    "name", ["dcgm-excerpt.txt", "cpu-power-exporter.txt", "backend-histogram.txt"]
)
def test_fixtures_match_prometheus_client(name: str) -> None:
    text = (DATA / name).read_text()
    assert _same(_ours(text), _theirs(text))


def test_types_timestamps_and_escapes() -> None:
    p = parse_text((DATA / "backend-histogram.txt").read_text())
    assert p.types["dynamo_frontend_time_to_first_token_seconds"] == "histogram"
    assert p.types["rpc_duration_seconds"] == "summary"
    idx = p.names.index("dynamo_frontend_inflight_requests")
    assert p.timestamps_ms == {idx: 1700000000000}
    last = len(p) - 1
    assert p.names[last] == "escaped_labels"
    assert dict(p.labels[last]) == {"path": "C:\\dir", "msg": 'say "hi"\nbye'}
    assert p.values[last] == -math.inf


def test_stream_parser_equals_whole_text() -> None:
    text = (DATA / "dcgm-excerpt.txt").read_text() + (DATA / "backend-histogram.txt").read_text()
    for size in (1, 7, 64, 4096):
        sp = StreamParser()
        for i in range(0, len(text), size):
            sp.feed(text[i : i + size])
        got = sp.close()
        want = parse_text(text)
        assert (got.names, got.labels, got.values) == (want.names, want.labels, want.values)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("ok 1\nbad_line\n", "line 2: sample line has no value: 'bad_line'"),
        ('a{x="1" 2\n', "line 1: '{' without a closing '}': 'a{x=\"1\" 2'"),
        ('a{x="1"} one\n', "line 1: could not convert string to float: 'one': 'a{x=\"1\"} one'"),
        ("a{x=1} 2\n", "line 1: label 'x' value does not start with '\"': 'a{x=1} 2'"),
        ('a{1x="1"} 2\n', "line 1: invalid label name '1x': 'a{1x=\"1\"} 2'"),
        ("9a 2\n", "line 1: invalid metric name '9a': '9a 2'"),
        (
            "a 1 2 3\n",
            "line 1: expected 'value [timestamp]' after the name, got ' 1 2 3': 'a 1 2 3'",
        ),
    ],
)
def test_errors_name_the_line(body: str, message: str) -> None:
    with pytest.raises(ParseError) as exc:
        parse_text(body)
    assert str(exc.value) == message


def test_label_memo_returns_same_object() -> None:
    assert parse_labels('a="1",b="2"') is parse_labels('a="1",b="2"')
    assert parse_labels('a="1", b="2",') == (("a", "1"), ("b", "2"))


_name = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,12}", fullmatch=True)
_value = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            _name,
            st.dictionaries(_name.filter(lambda s: not s.startswith("__")), _value, max_size=4),
            st.floats(allow_nan=False, width=64),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_random_bodies_match_prometheus_client(
    samples: list[tuple[str, dict[str, str], float]],
) -> None:
    lines = []
    for name, labels, value in samples:
        inner = ",".join(
            '{}="{}"'.format(k, v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n"))
            for k, v in labels.items()
        )
        lines.append(f"{name}{{{inner}}} {value!r}" if labels else f"{name} {value!r}")
    text = "\n".join(lines) + "\n"
    assert _same(_ours(text), _theirs(text))

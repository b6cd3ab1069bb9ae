"""The bounded YAML loader: limits, plain data only, every refusal with its $.path (issue 14)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from srt_schema import OverrideSyntaxError, RecipeError, load_recipe_text, parse_set
from srt_schema.errors import MigrationError
from srt_schema.migrate import migrate_text
from srt_schema.yamlio import YAML_LIMITS, decode_yaml_bytes, dump_yaml, parse_yaml


def _messages(text: str, file: str = "r.yaml") -> list[str]:
    with pytest.raises(RecipeError) as err:
        parse_yaml(text, file=file)
    return [issue.render() for issue in err.value.issues]


def _bomb(levels: int = 9, width: int = 9, indent: str = "") -> str:
    """A "billion laughs" block: ``width ** levels`` values from a few hundred bytes."""
    xs = ", ".join(["x"] * width)
    lines = [f"{indent}l0: &l0 [{xs}]"]
    for i in range(1, levels):
        refs = ", ".join([f"*l{i - 1}"] * width)
        lines.append(f"{indent}l{i}: &l{i} [{refs}]")
    return "\n".join(lines) + "\n"


_RECIPE_HEAD = (
    "schema: 2\nname: bomb\nmodel: {path: /m, container: c, precision: fp8}\n"
    "resources: {gpus_per_node: 4}\nengine: sglang\n"
)


# -- plain data passes unchanged --------------------------------------------------------------
def test_plain_data_loads_as_before() -> None:
    text = "a: 1\nb: [1, 2.5, true, null, x, '2024-01-01']\nc: {d: e}\nf: !!str 12\ng: !!int '7'\n"
    assert parse_yaml(text, file="r.yaml") == {
        "a": 1,
        "b": [1, 2.5, True, None, "x", "2024-01-01"],
        "c": {"d": "e"},
        "f": "12",
        "g": 7,
    }


def test_an_alias_is_a_copy_of_its_anchor() -> None:
    value = parse_yaml("a: &x {k: [1]}\nb: *x\n", file="r.yaml")
    assert value == {"a": {"k": [1]}, "b": {"k": [1]}}
    value["b"]["k"].append(2)
    assert value["a"] == {"k": [1]}


def test_merge_keys_keep_explicit_keys_and_the_first_merged_mapping() -> None:
    text = "a: &a {x: 1}\nb: &b {x: 2, z: 3}\nc:\n  <<: [*a, *b]\n  z: 4\n"
    assert parse_yaml(text, file="r.yaml")["c"] == {"x": 1, "z": 4}


# -- aliases ------------------------------------------------------------------------------------
def test_alias_bomb_in_role_args_is_refused_quickly() -> None:
    text = _RECIPE_HEAD + "roles:\n  agg:\n    nodes: 1\n    args:\n" + _bomb(indent="      ")
    assert len(text) < 1024
    started = time.monotonic()
    with pytest.raises(RecipeError) as err:
        load_recipe_text(text, file="bomb.yaml")
    # hang guard: benchmarks/yaml_limits.py measures it (milliseconds); an expanded bomb hangs
    assert time.monotonic() - started < 5
    assert [i.render() for i in err.value.issues] == [
        "bomb.yaml: $.roles.agg.args.l5[0]: the document has more than 100000 values once every "
        "alias is expanded (aliases count in full) (141196 so far; limit expanded_nodes = "
        "100000); an alias (*name) repeats its anchor in full; write the values once"
    ]


def test_alias_bomb_in_sweep_is_refused_quickly() -> None:
    text = _RECIPE_HEAD + "sweep:\n" + _bomb(indent="  ")
    started = time.monotonic()
    with pytest.raises(RecipeError) as err:
        load_recipe_text(text, file="bomb.yaml")
    assert time.monotonic() - started < 5  # hang guard: milliseconds; an expanded bomb hangs
    assert err.value.issues[0].path == "$.sweep.l5[0]"
    assert "limit expanded_nodes = 100000" in err.value.issues[0].message


def test_expanded_text_is_bounded() -> None:
    big = "y" * 1_000_000
    text = f"a: &s {big}\nb: [" + ", ".join(["*s"] * 17) + "]\n"
    assert _messages(text) == [
        "r.yaml: $.b[15]: the document has more than 16777216 characters of values once every "
        "alias is expanded (17000002 so far; limit expanded_text = 16777216); an alias (*name) "
        "repeats its anchor in full; write the values once"
    ]


@pytest.mark.parametrize(
    ("text", "path"),
    [("a: &x [1, *x]\n", "$.a[1]"), ("a: &x {b: {c: *x}}\n", "$.a.b.c")],
)
def test_a_self_referencing_alias_is_refused(text: str, path: str) -> None:
    assert _messages(text) == [
        f"r.yaml: {path}: the alias *x at line 1 refers to the value it is part of (a "
        "self-referencing alias); write the value out instead"
    ]


def test_an_alias_nesting_past_the_depth_limit_is_refused() -> None:
    deep = "[" * 40 + "]" * 40
    assert _messages(
        f"a: &d {deep}\nb: [[[[[[[[[[[[[[[[[[[[[[[[[*d]]]]]]]]]]]]]]]]]]]]]]]]]\n"
    ) == [
        "r.yaml: $.b" + "[0]" * 25 + ": the alias *d nests more than 64 levels deep at line 2 "
        "(limit depth = 64); flatten the value"
    ]


# -- size limits --------------------------------------------------------------------------------
def test_depth_is_bounded() -> None:
    text = "a: " + "[" * 100 + "]" * 100 + "\n"
    assert _messages(text) == [
        "r.yaml: $.a" + "[0]" * 63 + ": nested more than 64 levels deep at line 1 (limit depth "
        "= 64); flatten the value"
    ]


def test_document_size_is_bounded() -> None:
    text = "a: x\n" + "#" * YAML_LIMITS["document_size"].maximum
    assert _messages(text) == [
        "r.yaml: the document has 4194309 characters (limit document_size = 4194304); a recipe "
        "is far smaller: is this the right file?"
    ]


def test_scalar_length_is_bounded() -> None:
    text = "a: [ok, " + "z" * (YAML_LIMITS["scalar_length"].maximum + 1) + "]\n"
    assert _messages(text) == [
        "r.yaml: $.a[1]: a value of 1048577 characters at line 1 (limit scalar_length = "
        "1048576); keep long text in a file and name its path"
    ]


def test_an_integer_too_long_to_convert_is_refused() -> None:
    assert _messages("a: " + "9" * 5000 + "\n") == [
        "r.yaml: $.a: '" + "9" * 57 + "...' (5000 characters, line 1) does not read as !!int; "
        "quote it to keep it as text"
    ]


# -- plain data only ------------------------------------------------------------------------
def test_a_date_is_refused_with_the_quoted_spelling() -> None:
    assert _messages("schema: 2\nname: 2024-01-01\n") == [
        'r.yaml: $.name: YAML reads 2024-01-01 as a date (line 2); quote it: "2024-01-01"'
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "a: !!binary aGk=\n",
            "r.yaml: $.a: the tag !!binary at line 1 makes binary data, which a recipe cannot "
            "hold; remove the tag (quote the value for text, write a list for a set)",
        ),
        (
            "roles: {agg: {args: !!set {x, y}}}\n",
            "r.yaml: $.roles.agg.args: the tag !!set at line 1 makes a set, which a recipe "
            "cannot hold; remove the tag (quote the value for text, write a list for a set)",
        ),
        (
            "a: [!!python/object/apply:os.system [echo]]\n",
            "r.yaml: $.a[0]: unknown tag !!python/object/apply:os.system at line 1; a recipe "
            "holds plain values only (text, numbers, true/false, null, lists, mappings): remove "
            "the tag",
        ),
        (
            "a:\n  b: !custom x\n",
            "r.yaml: $.a.b: unknown tag !custom at line 2; a recipe holds plain values only "
            "(text, numbers, true/false, null, lists, mappings): remove the tag",
        ),
        (
            "a: !!timestamp 2024-01-01\n",
            "r.yaml: $.a: the tag !!timestamp at line 1 makes a date, which a recipe cannot "
            "hold; remove the tag (quote the value for text, write a list for a set)",
        ),
        (
            "a: !!int twelve\n",
            "r.yaml: $.a: 'twelve' (6 characters, line 1) does not read as !!int; quote it to "
            "keep it as text",
        ),
    ],
)
def test_tags_that_are_not_plain_data_are_refused(text: str, message: str) -> None:
    assert _messages(text) == [message]


def test_non_string_keys_are_refused_each_with_its_line() -> None:
    text = "roles:\n  agg:\n    args:\n      1: x\n      true: y\n      ~: z\n      [a]: w\n"
    assert _messages(text) == [
        "r.yaml: $.roles.agg.args: keys must be strings; YAML reads the key 1 as an integer "
        "(line 4): quote it",
        "r.yaml: $.roles.agg.args: keys must be strings; YAML reads the key true as true/false "
        "(line 5): quote it",
        "r.yaml: $.roles.agg.args: keys must be strings; YAML reads the key ~ as null (line 6): "
        "quote it",
        "r.yaml: $.roles.agg.args: keys must be strings; a key is a list (line 7): quote it",
    ]


def test_a_date_key_is_refused() -> None:
    assert _messages("a:\n  2024-01-01: x\n") == [
        'r.yaml: $.a (a key): YAML reads 2024-01-01 as a date (line 2); quote it: "2024-01-01"'
    ]


def test_several_type_problems_are_reported_together() -> None:
    assert [m.split(": ", 2)[1] for m in _messages("a: 2024-01-01\nb: !!binary aGk=\n")] == [
        "$.a",
        "$.b",
    ]


def test_a_duplicate_key_names_the_mapping_and_both_lines() -> None:
    assert _messages("roles:\n  agg: {}\n  agg: {}\n") == [
        "r.yaml: $.roles: invalid YAML at line 3, column 3: duplicate key 'agg' (first on line "
        "2, again on line 3); keep one of them"
    ]


def test_a_second_document_is_refused() -> None:
    assert _messages("a: 1\n---\nb: 2\n") == [
        "r.yaml: a second YAML document starts at line 2; a recipe is one document: remove the "
        "`---` or split the file"
    ]


def test_the_loader_never_returns_other_than_plain_data() -> None:
    text = "a: [1, 2.5, .inf, yes, ~, '', 0x1f, 1:30, {b: [c]}]\nd: &d e\nf: *d\n"

    def plain(value: Any) -> bool:
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return value is None or isinstance(value, str | int | float | bool)

    value = parse_yaml(text, file="r.yaml")
    assert plain(value)
    assert value["a"][6:8] == [31, 90]
    assert parse_yaml(dump_yaml(value), file="r.yaml") == value


def test_a_long_bad_value_is_echoed_shortened() -> None:
    [message] = _messages("a: !" + "t" * 5000 + " x\n")
    assert len(message) < 400
    assert "ttt... at line 1" in message


# -- bytes --------------------------------------------------------------------------------------
def test_non_utf8_bytes_name_the_offset_and_line() -> None:
    with pytest.raises(RecipeError) as err:
        decode_yaml_bytes(b"name: ok\nmodel: caf\xe9\n", file="r.yaml")
    assert str(err.value) == (
        "r.yaml: not UTF-8 text: byte 0xe9 at offset 19 (line 2) invalid continuation byte; "
        "save the file as UTF-8"
    )


def test_utf8_bytes_decode_and_a_byte_order_mark_is_dropped() -> None:
    assert decode_yaml_bytes("\ufeffname: café\n".encode(), file="r.yaml") == "name: café\n"


# -- --set values -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (
            "name=2024-01-01",
            '--set $.name: YAML reads 2024-01-01 as a date (line 1); quote it: "2024-01-01"',
        ),
        (
            "roles.agg.args.x=[1, !!binary aGk=]",
            "--set $.roles.agg.args.x[1]: the tag !!binary at line 1 makes binary data, which a "
            "recipe cannot hold; remove the tag (quote the value for text, write a list for a "
            "set)",
        ),
        (
            "sweep.c=&c [*c]",
            "--set $.sweep.c[0]: the alias *c at line 1 refers to the value it is part of (a "
            "self-referencing alias); write the value out instead",
        ),
    ],
)
def test_set_values_follow_the_loader_rules(arg: str, message: str) -> None:
    with pytest.raises(OverrideSyntaxError) as err:
        parse_set(arg)
    assert str(err.value) == message


def test_set_values_that_are_plain_still_parse() -> None:
    assert parse_set('name="2024-01-01"').value == "2024-01-01"
    assert parse_set("a=[4, 8]").value == [4, 8]
    assert parse_set("a=[").value == "["  # not YAML: kept as text
    assert parse_set("a={x: 1}").value == "{x: 1}"  # a mapping stays the literal text


# -- migrate ------------------------------------------------------------------------------------
def test_migrate_refuses_an_alias_bomb_before_ruamel_reads_it() -> None:
    started = time.monotonic()
    with pytest.raises(MigrationError) as err:
        migrate_text("name: x\nbackend:\n  args:\n" + _bomb(indent="    "), file="v1.yaml")
    assert time.monotonic() - started < 5  # hang guard: milliseconds; an expanded bomb hangs
    assert str(err.value).startswith("v1.yaml: $.backend.args.l5[0]: the document has more than")


def test_migrate_refuses_deep_nesting_and_dates() -> None:
    with pytest.raises(MigrationError) as err:
        migrate_text("name: 2024-01-01\nx: " + "[" * 100 + "]" * 100 + "\n", file="v1.yaml")
    assert str(err.value) == (
        'v1.yaml: $.name: YAML reads 2024-01-01 as a date (line 1); quote it: "2024-01-01"; '
        "$.x" + "[0]" * 63 + ": nested more than 64 levels deep at line 2 (limit depth = 64); "
        "flatten the value"
    )


def test_migrate_refuses_nesting_past_what_libyaml_reads() -> None:
    with pytest.raises(MigrationError) as err:
        migrate_text("x: " + "[" * 1001 + "]" * 1001 + "\n", file="v1.yaml")
    assert str(err.value) == (
        "v1.yaml: YAML nested too deeply to read (limit depth = 64); flatten the value"
    )


def test_migrate_keeps_its_own_duplicate_key_message() -> None:
    with pytest.raises(MigrationError, match="duplicate key 'a' at line 2"):
        migrate_text("a: 1\na: 2\n", file="v1.yaml")


def test_srt_schema_validate_reports_a_non_utf8_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from srt_schema.__main__ import main

    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"schema: 2\nname: caf\xe9\n")
    assert main(["validate", "--no-cluster", str(bad)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"{bad}: not UTF-8 text: byte 0xe9 at offset 19 (line 2) invalid continuation byte; "
        "save the file as UTF-8"
    )

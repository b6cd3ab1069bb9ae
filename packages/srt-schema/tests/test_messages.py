"""Messages on hostile input: short, all of a file's problems at once, at the path they are.

Issue 14 items 2 and 4: a value is echoed at most ~200 characters; a type error does not hide an
unsafe name; a misspelt ``schema`` key is named as a typo; an error in an override file's
``base:`` is reported once at ``$.base.<path>``; names that become file names are refused.
"""

from __future__ import annotations

from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document, load_recipe_text
from srt_schema.errors import bound_message, clip, show_value
from srt_schema.validate.names_rules import name_problem

ALLOWED = (
    "use letters, digits, '.', '_' and '-' (not starting with '.' or '-'), at most 128 characters"
)
UNSAFE = "has characters that are not safe in a file name"
JOB = "the job's folder and Slurm job name"


def _issues(doc: Any, file: str = "r.yaml") -> list[tuple[str, str, str]]:
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file=file)
    return [(i.file, i.path, i.message) for i in err.value.issues]


def _override_file(make_recipe: Any, **sections: Any) -> dict[str, Any]:
    base = make_recipe(schema=None)
    return {"schema": 2, "base": base, **sections}


# ------------------------------------------------------------------ clipping


def test_clip_keeps_short_text_and_counts_long_text() -> None:
    assert clip("abc") == "abc"
    assert clip("x" * 200) == "x" * 200
    assert clip("x" * 201) == "x" * 200 + "... (201 characters)"
    assert show_value("a" * 1000) == "'" + "a" * 199 + "... (1002 characters)"


def test_bound_message_clips_every_long_run_and_keeps_the_fix() -> None:
    message = bound_message(f"value {'y' * 1_000_000} is bad; use a short one")
    assert message == f"value {'y' * 200}... (1000000 characters) is bad; use a short one"


def test_bound_message_caps_a_message_of_many_short_words() -> None:
    message = bound_message("ab " * 10_000)
    assert len(message) < 2100
    assert message.endswith("... (30000 characters)")


def test_a_one_megabyte_name_gives_a_short_message(make_recipe: Any) -> None:
    big = "n" * 1_000_000
    [(file, path, message)] = _issues(make_recipe(name=big))
    assert (file, path) == ("r.yaml", "$.name")
    assert message == (
        f"'{'n' * 199}... (1000002 characters) is 1000000 characters long; it becomes part of "
        f"{JOB}: {ALLOWED}"
    )


def test_a_one_megabyte_unknown_key_gives_a_short_path_and_message(make_recipe: Any) -> None:
    doc = make_recipe()
    doc["k" * 1_000_000] = 1
    [(_, path, message)] = _issues(doc)
    assert path == "$." + "k" * 198 + "... (1000002 characters)"
    # the clipped run is the key with its quotes and the `;` after it
    assert message.startswith("unknown key `" + "k" * 199 + "... (1000003 characters) allowed")
    assert len(message) < 1000


def test_a_one_megabyte_value_text_gives_a_short_message() -> None:
    text = "schema: 2\nname: " + "z" * 1_000_000 + "\n"
    with pytest.raises(RecipeError) as err:
        load_recipe_text(text, file="big.yaml")
    assert all(len(i.render()) < 2100 for i in err.value.issues)
    assert len(str(err.value)) < 2100 * len(err.value.issues)


# ------------------------------------------------------------------ schema typo


@pytest.mark.parametrize("typo", ["schmea", "Schema", "shema", "SCHEMA"])
def test_a_misspelt_schema_key_is_named_as_a_typo(make_recipe: Any, typo: str) -> None:
    doc = make_recipe(schema=None)
    doc[typo] = 2
    assert _issues(doc) == [
        (
            "r.yaml",
            f"$.{typo}",
            f"unknown key '{typo}'; did you mean `schema`? Write `schema: 2` (the key is lower "
            "case)",
        )
    ]


def test_no_schema_key_at_all_still_points_at_migrate(make_recipe: Any) -> None:
    [(_, path, message)] = _issues(make_recipe(schema=None))
    assert path == "$"
    assert "srtctl migrate -f r.yaml --in-place" in message


def test_a_misspelt_schema_key_of_an_override_file(make_recipe: Any) -> None:
    doc = _override_file(make_recipe, override_a={"roles": {"agg": {"workers": 2}}})
    doc["schmea"] = doc.pop("schema")
    assert _issues(doc, "o.yaml") == [
        (
            "o.yaml",
            "$.schmea",
            "unknown key 'schmea'; did you mean `schema`? Write `schema: 2` (the key is lower "
            "case)",
        )
    ]


def test_a_misspelt_schema_key_inside_base(make_recipe: Any) -> None:
    doc = _override_file(make_recipe, override_a={"roles": {"agg": {"workers": 2}}})
    del doc["schema"]
    doc["base"]["shema"] = 2
    [(_, path, message)] = _issues(doc, "o.yaml")
    assert path == "$.base.shema"
    assert message.startswith("unknown key 'shema'; did you mean `schema`?")


# ------------------------------------------------------------------ all checks together


def test_a_type_error_does_not_hide_an_unsafe_name(make_recipe: Any) -> None:
    bench = {"type": "sa-bench", "isl": "abc", "osl": 128, "concurrencies": [1]}
    doc = make_recipe(name="../x", benchmark=bench)
    assert _issues(doc) == [
        ("r.yaml", "$.benchmark.isl", "expected an integer or null, got 'abc'"),
        ("r.yaml", "$.name", f"'../x' {UNSAFE}; it becomes part of {JOB}: {ALLOWED}"),
    ]


def test_every_structural_error_of_a_file_is_reported(make_recipe: Any) -> None:
    bench = {"type": "sa-bench", "isl": "abc", "osl": [1], "concurrencies": [1]}
    doc = make_recipe(benchmark=bench, resources={"gpus_per_node": "four"})
    paths = [path for _, path, _ in _issues(doc)]
    assert paths == ["$.resources.gpus_per_node", "$.benchmark.isl", "$.benchmark.osl"]


# ------------------------------------------------------------------ override base


def test_an_error_in_base_is_reported_once_at_its_base_path(make_recipe: Any) -> None:
    doc = _override_file(
        make_recipe,
        override_a={"roles": {"agg": {"workers": 2}}},
        override_b={"benchmark": {"osl": 256}},
        zip_override_c={"benchmark": {"isl": [64, 256]}},
    )
    doc["base"]["resources"]["gpus_per_node"] = "four"
    assert _issues(doc, "o.yaml") == [
        ("o.yaml", "$.base.resources.gpus_per_node", "expected an integer, got 'four'")
    ]


def test_a_missing_key_of_base_is_reported_once_at_base(make_recipe: Any) -> None:
    doc = _override_file(
        make_recipe, override_a={"roles": {"agg": {"workers": 2}}}, override_b={"name": "b"}
    )
    del doc["base"]["model"]
    [(file, path, message)] = _issues(doc, "o.yaml")
    assert (file, path) == ("o.yaml", "$.base.model")
    assert message.startswith("required key is missing; add `model:`")


def test_an_error_a_variant_sets_stays_with_the_variant(make_recipe: Any) -> None:
    doc = _override_file(
        make_recipe,
        override_a={"benchmark": {"isl": "x"}},
        override_b={"benchmark": {"osl": 256}},
    )
    assert _issues(doc, "o.yaml") == [
        ("o.yaml:override_a", "$.benchmark.isl", "expected an integer or null, got 'x'")
    ]


def test_an_unsafe_base_name_is_reported_once_at_base(make_recipe: Any) -> None:
    doc = _override_file(
        make_recipe,
        override_a={"roles": {"agg": {"workers": 2}}},
        zip_override_c={"benchmark": {"isl": [64, 256]}},
    )
    doc["base"]["name"] = "../x"
    assert _issues(doc, "o.yaml") == [
        ("o.yaml", "$.base.name", f"'../x' {UNSAFE}; it becomes part of {JOB}: {ALLOWED}")
    ]


def test_a_base_that_is_not_a_mapping_is_refused_without_schema(make_recipe: Any) -> None:
    assert _issues({"base": 5}, "o.yaml") == [
        ("o.yaml", "$.base", "must be a mapping (the recipe), got 5")
    ]
    assert _issues({"base": [1]}, "o.yaml") == [
        ("o.yaml", "$.base", "must be a mapping (the recipe), got a list")
    ]


# ------------------------------------------------------------------ names and paths


def test_a_name_with_a_parent_folder_is_refused(make_recipe: Any) -> None:
    assert _issues(make_recipe(name="../x")) == [
        ("r.yaml", "$.name", f"'../x' {UNSAFE}; it becomes part of {JOB}: {ALLOWED}")
    ]


@pytest.mark.parametrize(
    "name", ["a/b", ".hidden", "-flag", "a b", "x\x00y", "", "é", "$(rm)", "a" * 129]
)
def test_unsafe_names_are_refused(name: str) -> None:
    assert name_problem(name) is not None


@pytest.mark.parametrize("name", ["qwen3-0.6b", "a_b.c-d", "_x", "7", "a" * 128])
def test_safe_names_pass(name: str) -> None:
    assert name_problem(name) is None


def test_a_service_name_is_checked(make_recipe: Any) -> None:
    doc = make_recipe(services=[{"name": "../../etc/passwd", "command": ["true"]}])
    [(_, path, message)] = _issues(doc)
    assert path == "$.services[0].name"
    assert message == (
        f"'../../etc/passwd' {UNSAFE}; it becomes part of the service's log file "
        f"(service_<name>.out): {ALLOWED}"
    )


def test_a_storage_subdir_part_is_checked(make_recipe: Any) -> None:
    doc = make_recipe(observability={"tachometer": {"storage_subdir": "power/$HOME"}})
    assert _issues(doc) == [
        (
            "r.yaml",
            "$.observability.tachometer.storage_subdir",
            f"'power/$HOME': part '$HOME' {UNSAFE}; it becomes a folder below the log "
            f"directory: in each part {ALLOWED}",
        )
    ]


def test_sweep_job_names_stay_safe(make_recipe: Any) -> None:
    doc = make_recipe(
        sweep={"c": [[4, 8], "a/../b"]},
        benchmark={"type": "sa-bench", "isl": 128, "osl": 128, "concurrencies": [1]},
    )
    jobs = load_recipe_document(doc, file="s.yaml")
    assert [j.name for j in jobs] == ["unit_c4-8", "unit_ca-..-b"]

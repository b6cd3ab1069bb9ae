"""A whole-value sweep placeholder (``field: "{key}"``) loads in the type its field accepts."""

from __future__ import annotations

from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document


def _bench(**changes: Any) -> dict[str, Any]:
    return {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1], **changes}


def test_a_scalar_placeholder_in_a_list_field_loads_as_a_one_element_list(
    make_recipe: Any,
) -> None:
    doc = make_recipe(
        sweep={"concurrency": [4, 8]}, benchmark=_bench(concurrencies="{concurrency}")
    )
    jobs = load_recipe_document(doc, file="s.yaml")
    assert [j.recipe.benchmark.concurrencies for j in jobs] == [(4,), (8,)]
    # the job's config.yaml carries the typed value, so it loads again on its own
    assert [j.document["benchmark"]["concurrencies"] for j in jobs] == [[4], [8]]


def test_a_list_value_in_a_list_field_is_kept(make_recipe: Any) -> None:
    doc = make_recipe(sweep={"levels": [[4, 8], [16]]}, benchmark=_bench(concurrencies="{levels}"))
    jobs = load_recipe_document(doc, file="s.yaml")
    assert [j.recipe.benchmark.concurrencies for j in jobs] == [(4, 8), (16,)]


def test_an_x_string_placeholder_stays_a_string(make_recipe: Any) -> None:
    doc = make_recipe(sweep={"levels": ["4x8"]}, benchmark=_bench(concurrencies="{levels}"))
    (job,) = load_recipe_document(doc, file="s.yaml")
    assert job.recipe.benchmark.concurrencies == "4x8"


def test_a_digit_string_in_an_integer_field_loads_as_an_integer(make_recipe: Any) -> None:
    doc = make_recipe(sweep={"isl": ["1024", "2048"]}, benchmark=_bench(isl="{isl}"))
    jobs = load_recipe_document(doc, file="s.yaml")
    assert [j.recipe.benchmark.isl for j in jobs] == [1024, 2048]


def test_a_number_in_a_text_field_loads_as_text(make_recipe: Any) -> None:
    doc = make_recipe(sweep={"account": [1234]}, slurm={"account": "{account}"})
    (job,) = load_recipe_document(doc, file="s.yaml")
    assert job.recipe.slurm.account == "1234"


def test_free_form_args_keep_the_sweep_value_as_written(make_recipe: Any) -> None:
    doc = make_recipe(sweep={"mrr": [16]})
    doc["roles"]["agg"]["args"] = {"max-running-requests": "{mrr}"}
    (job,) = load_recipe_document(doc, file="s.yaml")
    assert job.document["roles"]["agg"]["args"] == {"max-running-requests": 16}


def test_a_value_no_spelling_fits_is_still_refused(make_recipe: Any) -> None:
    doc = make_recipe(sweep={"isl": ["long"]}, benchmark=_bench(isl="{isl}"))
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="s.yaml")
    assert [i.render() for i in err.value.issues] == [
        "s.yaml [isl=long]: $.benchmark.isl: expected an integer or null, got 'long'"
    ]

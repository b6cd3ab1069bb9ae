"""FormattablePath formatting and the load-time placeholder check."""

from __future__ import annotations

from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document
from srt_schema.formatting import FormatError, expand_vars, format_path

VALUES = {"job_id": "42", "run_name": "r_42", "log_dir": "/out/42/logs"}


def test_format_then_vars_then_home() -> None:
    out = format_path(
        "~/runs/{run_name}/$USER/${MISSING}", VALUES, environ={"USER": "ann"}, home="/home/ann"
    )
    assert out == "/home/ann/runs/r_42/ann/${MISSING}"


def test_host_paths_become_absolute() -> None:
    assert format_path("out/{job_id}", VALUES, environ={}, home="/h", cwd="/work") == "/work/out/42"
    assert format_path("out/{job_id}", VALUES, environ={}, home="/h") == "out/42"


def test_missing_placeholder_names_what_is_available() -> None:
    with pytest.raises(FormatError) as err:
        format_path("/x/{node}", VALUES, environ={}, home="/h")
    assert str(err.value) == (
        "missing placeholder 'node' in template '/x/{node}'; available placeholders: job_id, "
        "log_dir, run_name"
    )


def test_expand_vars_leaves_unknown_alone() -> None:
    assert expand_vars("$A-${B}-$C", {"A": "1", "B": "2"}) == "1-2-$C"


def test_unknown_placeholder_is_refused_at_load(make_recipe: Any) -> None:
    doc = make_recipe(container_mounts={"/data/{jobid}": "/data"})
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="r.yaml")
    assert [i.render() for i in err.value.issues] == [
        'r.yaml: $.container_mounts["/data/{jobid}"]: unknown placeholder {jobid} in '
        "'/data/{jobid}'; available: {job_id}, {run_name}, {head_node_ip}, {log_dir}, "
        "{model_path}, {container_image}, {gpus_per_node}"
    ]


def test_known_placeholders_load(make_recipe: Any) -> None:
    doc = make_recipe(
        container_mounts={"/scratch/{job_id}": "/scratch"}, output={"log_dir": "./o/{job_id}"}
    )
    [job] = load_recipe_document(doc, file="r.yaml")
    assert job.recipe.container_mounts == {"/scratch/{job_id}": "/scratch"}

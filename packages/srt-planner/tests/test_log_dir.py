"""``output.log_dir`` resolution (pure: environment and directory are parameters)."""

from __future__ import annotations

import pytest

from srt_planner.errors import PlanningError
from srt_planner.log_dir import DEFAULT_LOG_DIR, resolve_log_dir

ENV = {"HOME": "/home/u", "SCRATCH": "/lustre/u"}


def _resolve(template: str) -> str | None:
    return resolve_log_dir(template, job_id="42", run_name="exp_42", environ=ENV, cwd="/sub")


@pytest.mark.parametrize(
    ("template", "resolved"),
    [
        (DEFAULT_LOG_DIR, None),
        ("/abs/{job_id}", "/abs/42"),
        ("$SCRATCH/{run_name}/logs", "/lustre/u/exp_42/logs"),
        ("${SCRATCH}/x/../{job_id}", "/lustre/u/42"),
        ("~/srt/{job_id}", "/home/u/srt/42"),
        ("runs/{job_id}", "/sub/runs/42"),
    ],
)
def test_templates(template: str, resolved: str | None) -> None:
    assert _resolve(template) == resolved


def test_an_unknown_placeholder_names_the_ones_there_are() -> None:
    with pytest.raises(PlanningError) as caught:
        _resolve("/x/{head_node_ip}")
    assert str(caught.value) == (
        "$.output.log_dir: unknown placeholder {head_node_ip} in '/x/{head_node_ip}'; "
        "available: {job_id}, {run_name}"
    )


def test_an_unset_variable_is_an_error_not_an_empty_path() -> None:
    with pytest.raises(PlanningError) as caught:
        _resolve("$NOPE/{job_id}")
    assert (
        str(caught.value)
        == "$.output.log_dir: $NOPE in '$NOPE/{job_id}' is not set in the environment"
    )

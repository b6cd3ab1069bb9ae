"""The resume decision (srt_cli.resume): point identity, rollup verdicts, reuse, the table."""

from __future__ import annotations

import hashlib
import json

from srt_cli.resume import (
    JobFacts,
    Point,
    RollupVerdict,
    build_point_id,
    build_rollup_verdict,
    decide_point,
    render_resume_table,
)

CONFIG = "schema: 2\nname: s_bs16\nroles:\n  agg:\n    args:\n      block-size: 16\n"


def test_a_point_is_the_hash_of_its_config_yaml_and_its_engine_mode() -> None:
    plain = build_point_id(CONFIG, stand_in=False)
    assert plain == hashlib.sha256(CONFIG.encode()).hexdigest()  # the lock's recipe_sha256
    assert build_point_id(CONFIG, stand_in=False) == plain
    assert build_point_id(CONFIG, stand_in=True) != plain
    assert build_point_id(CONFIG.replace("16", "32"), stand_in=False) != plain


def _rollup(*runs: dict[str, object], **top: object) -> bytes:
    return json.dumps({"benchmark_type": "sa-bench", "runs": list(runs), **top}).encode()


def _valid(reasons: tuple[str, ...] = ()) -> dict[str, object]:
    if not reasons:
        return {"verdict": "valid", "reasons": []}
    return {"verdict": "invalid", "reasons": [{"code": c, "detail": "x"} for c in reasons]}


def test_a_rollup_without_verdicts_is_valid_when_a_run_has_output_tokens() -> None:
    assert build_rollup_verdict(_rollup({"total_output_tokens": 10})) == RollupVerdict(valid=True)
    assert build_rollup_verdict(_rollup({"total_output_tokens": 0})) == RollupVerdict(
        valid=False, reasons=("no run with output tokens",)
    )
    assert not build_rollup_verdict(_rollup()).valid
    assert build_rollup_verdict(_rollup(data={"records": {}})).valid  # embedded aiperf export


def test_an_invalid_verdict_on_the_rollup_or_any_run_makes_it_invalid() -> None:
    run_ok = {"total_output_tokens": 10, "validity": _valid()}
    run_bad = {"total_output_tokens": 10, "validity": _valid(("window_too_short",))}
    assert build_rollup_verdict(_rollup(run_ok, validity=_valid())).valid
    assert build_rollup_verdict(_rollup(run_ok, run_bad)) == RollupVerdict(
        valid=False, reasons=("window_too_short",)
    )
    top = _valid(("clock_skew", "window_too_short"))
    assert build_rollup_verdict(_rollup(run_ok, run_bad, validity=top)) == RollupVerdict(
        valid=False, reasons=("clock_skew", "window_too_short")
    )
    # A verdict says more than the token count: a valid verdict with no tokens counted is valid.
    assert build_rollup_verdict(_rollup({"validity": _valid()})).valid


def test_an_unreadable_rollup_is_invalid_and_says_why() -> None:
    verdict = build_rollup_verdict(b"{not json")
    assert not verdict.valid
    assert verdict.reasons[0].startswith("unreadable rollup (")


POINT = Point(point_id="p1", job_name="s_bs16", params={"bs": 16})


def _job(job_id: str, at: str, status: str | None = "completed", **kw: object) -> JobFacts:
    fields: dict[str, object] = {
        "job_id": job_id,
        "folder": job_id,
        "generated_at": at,
        "status": status,
        "exit_code": 0 if status == "completed" else 1,
        "message": "",
        "final": status not in (None, "running"),
        "alive": False,
        "stage": "cleanup",
        "rollup": RollupVerdict(valid=True),
    }
    fields.update(kw)
    return JobFacts(**fields)  # type: ignore[arg-type]


def test_a_point_never_started_runs() -> None:
    decision = decide_point(POINT, [])
    assert (decision.action, decision.reason, decision.job) == (
        "run",
        "no rollup: never started",
        None,
    )


def test_the_newest_valid_job_is_reused_even_when_a_newer_one_failed() -> None:
    old = _job("41", "2026-12-01 10:00:00")
    older = _job("40", "2026-11-30 10:00:00")
    failed = _job("42", "2026-12-02 10:00:00", status="failed", rollup=None)
    decision = decide_point(POINT, [older, failed, old])
    assert (decision.action, decision.reason, decision.job) == ("reuse", "valid, reused", old)


def test_why_a_point_runs_again_names_the_newest_job() -> None:
    def reason(job: JobFacts) -> str:
        decision = decide_point(POINT, [job])
        assert decision.action == "run" and decision.job == job
        return decision.reason

    at = "2026-12-02 10:00:00"
    assert reason(_job("1", at, status="failed", message="agg_w0 exited with 2")) == (
        "failed: exit 1 (agg_w0 exited with 2)"
    )
    stopped = "stopped: SIGTERM during stage benchmark"
    assert (
        reason(_job("1", at, status="cancelled", message=stopped))
        == f"cancelled: exit 1 ({stopped})"
    )
    assert reason(_job("1", at, rollup=None)) == "no rollup"
    bad = RollupVerdict(valid=False, reasons=("no_output_tokens", "window_too_short"))
    assert reason(_job("1", at, rollup=bad)) == "invalid: no_output_tokens, window_too_short"
    # A completed job with a valid rollup whose status says failed (e.g. power required): runs.
    assert reason(_job("1", at, status="failed", message="power")) == "failed: exit 1 (power)"
    dead = _job("1", at, status="running", stage="benchmark", rollup=None)
    assert reason(dead) == "no rollup: the job ended without a final status (stage benchmark)"
    pending = _job("1", at, status=None, stage=None, rollup=None)
    assert reason(pending) == "no rollup: no status.json (the job did not run)"


def test_a_job_that_still_runs_is_waited_for_not_resubmitted() -> None:
    running = _job("7", "2026-12-02 10:00:00", status="running", alive=True, rollup=None)
    failed = _job("6", "2026-12-01 10:00:00", status="failed", rollup=None)
    decision = decide_point(POINT, [failed, running])
    assert decision.action == "wait"
    assert decision.reason == "running: job 7 has not ended (not submitted again)"


def test_the_table_lists_every_point_with_its_folder_action_and_reason() -> None:
    other = Point(point_id="p2", job_name="s_bs32", params={"bs": 32})
    decisions = [
        decide_point(POINT, [_job("4242", "2026-12-02 10:00:00")]),
        decide_point(other, []),
    ]
    assert render_resume_table(decisions, source="sweep.yaml") == (
        "resume sweep.yaml: 2 points: 1 reused, 1 to run, 0 still running\n"
        "  point   parameters  job folder  action  reason\n"
        "  ------  ----------  ----------  ------  ------------------------\n"
        "  s_bs16  bs=16       4242        reuse   valid, reused\n"
        "  s_bs32  bs=32       -           run     no rollup: never started"
    )

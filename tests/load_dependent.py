"""The one validity verdict that depends on how busy this machine is, not on the deployment:
`client_saturated`, from the client's event-loop lag and CPU share (docs/testing.md). Tests of a
real local run accept it only with its evidence: each reason quotes the client's own recorded
number that earned it."""

from __future__ import annotations

from collections.abc import Mapping

#: Validity codes a healthy local run may still earn on a loaded machine.
LOAD_DEPENDENT = frozenset({"client_saturated"})


def judged_valid_but_for_load(validity: Mapping[str, object], load: Mapping[str, object]) -> None:
    """`valid`, or `invalid` only for a load-dependent code, each reason quoting the client's
    recorded p99 loop lag or CPU share from its `client_load`."""
    reasons = validity.get("reasons", [])
    assert isinstance(reasons, list)
    codes = {r["code"] for r in reasons}
    assert codes <= LOAD_DEPENDENT, validity
    assert validity["verdict"] == ("invalid" if codes else "valid"), validity
    for reason in reasons:
        quoted = (f"lag {load['loop_lag_p99_ms']:.1f} ms", f"share {load['cpu_share']:.0%}")
        assert any(q in reason["detail"] for q in quoted), (reason, load)


def run_codes(rollup: Mapping[str, object]) -> set[str]:
    """The run-level validity codes of a rollup, checked to be load-dependent only and to come
    from a window judged invalid (empty when the run is valid)."""
    validity = rollup["validity"]
    assert isinstance(validity, dict)
    if validity == {"verdict": "valid"}:
        return set()
    codes = {r["code"] for r in validity["reasons"]}
    assert codes <= LOAD_DEPENDENT, validity
    runs = rollup["runs"]
    assert isinstance(runs, list)
    assert any(r["validity"]["verdict"] == "invalid" for r in runs), validity
    return codes

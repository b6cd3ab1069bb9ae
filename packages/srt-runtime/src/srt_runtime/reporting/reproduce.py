"""The reproduction report (docs/recipes.md#re-running-a-lockfile): a run started from a lockfile
compares its worker fingerprints with the lock's and writes ``logs/reproduction-report.txt``.

Per worker (``<role>_w<i>``) one ``OK`` / ``!!`` line for every compared fact (architecture, OS,
GPUs and driver, Python / CUDA / NCCL versions, each framework, each captured environment
variable, the installed packages), then the workers only one side has, then an ``ISSUES`` summary.
Host names and timestamps are expected to differ and are not compared. Pure: the caller reads the
fingerprints and writes the text.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

__all__ = ["REFERENCE_FILE", "ReproductionReference", "ReproductionReport", "build_report"]

#: Written into the job folder by ``srtctl apply`` when the source is a lockfile.
REFERENCE_FILE = "reproduce_from.json"
_MISSING = "(none)"
_PACKAGE_DETAIL = 8


class ReproductionReference(msgspec.Struct, frozen=True, kw_only=True):
    """What ``srtctl apply`` hands the run when it re-runs a lockfile."""

    #: The lockfile the job was applied from.
    source: str
    #: Whether the lock section's ``integrity`` matched its content at submit.
    integrity_ok: bool
    #: The locked run's job id: values that contain it (log paths) are compared with it replaced.
    job_id: str | None = None
    fingerprints: dict[str, Any] = {}


class ReproductionReport(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    #: ``<worker>: <field>`` for every difference; workers only one side has count too.
    issues: tuple[str, ...]


def _show(value: object) -> str:
    if value is None or value == "":
        return _MISSING
    return str(value)


def _gpu(fingerprint: Mapping[str, Any]) -> str | None:
    gpu = fingerprint.get("gpu")
    if not isinstance(gpu, Mapping) or not gpu.get("available"):
        return None
    names = [str(g.get("name")) for g in gpu.get("gpus", ()) if isinstance(g, Mapping)]
    kinds = ", ".join(f"{n} x{names.count(n)}" for n in dict.fromkeys(names))
    return f"{kinds} (driver {_show(gpu.get('driver'))})"


def _section(fingerprint: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = fingerprint.get(key)
    return value if isinstance(value, Mapping) else {}


def _packages(fingerprint: Mapping[str, Any]) -> dict[str, str]:
    """``name -> version`` over every interpreter's freeze lines."""
    found: dict[str, str] = {}
    for lines in _section(fingerprint, "pip_packages").values():
        for line in lines if isinstance(lines, list) else ():
            name, _, version = str(line).partition("==")
            found[name.lower()] = version
    return found


def _scalars(
    ref: Mapping[str, Any], run: Mapping[str, Any], ids: tuple[str | None, str | None]
) -> Iterator[tuple[str, str, str]]:
    for key in ("arch", "os", "python_version", "cuda_version", "nccl_version"):
        yield key, _show(ref.get(key)), _show(run.get(key))
    yield "gpu", _show(_gpu(ref)), _show(_gpu(run))
    ref_fw, run_fw = _section(ref, "frameworks"), _section(run, "frameworks")
    for name in sorted({*ref_fw, *run_fw}):
        yield f"frameworks.{name}", _show(ref_fw.get(name)), _show(run_fw.get(name))
    ref_env, run_env = _section(ref, "env"), _section(run, "env")
    for name in sorted({*ref_env, *run_env}):
        before, after = _show(ref_env.get(name)), _show(run_env.get(name))
        yield f"env.{name}", _neutral(before, ids[0]), _neutral(after, ids[1])


def _neutral(value: str, job_id: str | None) -> str:
    """``value`` with its run's job id replaced, so per-job paths compare equal."""
    return value.replace(job_id, "<job_id>") if job_id else value


def _package_line(ref: Mapping[str, Any], run: Mapping[str, Any]) -> tuple[bool, str]:
    before, after = _packages(ref), _packages(run)
    changes = [
        f"{name} {before[name]} -> {after[name]}"
        for name in sorted(before.keys() & after.keys())
        if before[name] != after[name]
    ]
    changes += [f"+{name} {after[name]}" for name in sorted(after.keys() - before.keys())]
    changes += [f"-{name} {before[name]}" for name in sorted(before.keys() - after.keys())]
    if not changes:
        return True, f"pip_packages: {len(after)} packages, identical"
    shown = "; ".join(changes[:_PACKAGE_DETAIL])
    more = f"; ... {len(changes) - _PACKAGE_DETAIL} more" if len(changes) > _PACKAGE_DETAIL else ""
    return False, f"pip_packages: {len(changes)} differences: {shown}{more}"


def build_report(
    reference: ReproductionReference, current: Mapping[str, Any], *, job_id: str | None = None
) -> ReproductionReport:
    """Compare the lock's fingerprints (``reference``) with this run's (``current``, the run
    ``job_id``)."""
    lines = [f"Reproduction report: this run against {reference.source}"]
    if not reference.integrity_ok:
        lines.append("  !! the lock section failed its integrity check (it may have been edited)")
    issues: list[str] = []
    ref_fps = reference.fingerprints
    for worker in sorted(ref_fps.keys() & current.keys()):
        ref, run = ref_fps[worker], current[worker]
        lines.append(f"{worker}:")
        if not isinstance(ref, Mapping) or not isinstance(run, Mapping):
            lines.append("  !! fingerprint unreadable on one side")
            issues.append(f"{worker}: fingerprint")
            continue
        for field, before, after in _scalars(ref, run, (reference.job_id, job_id)):
            if before == after:
                lines.append(f"  OK {field}: {after}")
            else:
                lines.append(f"  !! {field}: {before} -> {after}")
                issues.append(f"{worker}: {field}")
        same, text = _package_line(ref, run)
        lines.append(f"  {'OK' if same else '!!'} {text}")
        if not same:
            issues.append(f"{worker}: pip_packages")
    only_ref = sorted(ref_fps.keys() - current.keys())
    only_run = sorted(current.keys() - ref_fps.keys())
    if only_ref:
        lines.append(f"!! workers in the lock but not in this run: {', '.join(only_ref)}")
        issues += [f"{w}: not in this run" for w in only_ref]
    if only_run:
        lines.append(f"!! workers in this run but not in the lock: {', '.join(only_run)}")
        issues += [f"{w}: not in the lock" for w in only_run]
    if issues:
        lines.append(f"ISSUES: {len(issues)}")
        lines += [f"  - {issue}" for issue in issues]
    else:
        lines.append("ISSUES: none (every compared fact matches the lock)")
    return ReproductionReport(text="\n".join(lines) + "\n", issues=tuple(issues))

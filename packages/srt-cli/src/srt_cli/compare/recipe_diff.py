"""What differed between two runs: the resolved recipes and the software versions (pure).

Recipes are the jobs' `config.yaml` (the resolved recipe: variant, sweep point and `--set`
applied). They are flattened to dotted paths (`roles.decode.args.x`); a list is one value. `name`
is left out: sweep points and variants are renamed, which is not a setting. Versions come from the
worker fingerprints (`logs/fingerprint_*.json`, also in the lock): per field the set of values
over all workers, so `dynamo 1.6.1 -> 1.7.0` is one line however many workers changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "IGNORED_PATHS",
    "LEGEND_CHARS",
    "OVERLAY_CHARS",
    "SettingChange",
    "build_legends",
    "build_recipe_diff",
    "build_setting_values",
    "build_version_drift",
    "flatten",
    "render_value",
    "render_verdict",
]

IGNORED_PATHS = frozenset({"name"})
#: Fingerprint fields compared (dotted, inside each worker's fingerprint), then pip packages.
VERSION_FIELDS = (
    "python_version",
    "cuda_version",
    "nccl_version",
    "gpu.driver",
    "os",
)
MAX_PACKAGES = 10


@dataclass(frozen=True)
class SettingChange:
    path: str
    baseline: Any
    value: Any
    #: "changed", "added" (only in the run) or "removed" (only in the baseline).
    kind: str


_MISSING = object()


def flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted paths to leaf values; empty mappings and every list are leaves."""
    if isinstance(node, Mapping) and node:
        out: dict[str, Any] = {}
        for key in node:
            path = f"{prefix}.{key}" if prefix else str(key)
            out.update(flatten(node[key], path))
        return out
    return {prefix: node}


#: Settings a chart legend names (more are summarised as "+N").
LEGEND_SETTINGS = 2


#: Characters a Pareto legend entry shows, and an overlay chart's (srt_telemetry's legends).
LEGEND_CHARS = 60
OVERLAY_CHARS = 48


def _short_names(paths: list[str]) -> dict[str, str]:
    """Each path by its last segment ("engine.speedup_ratio" -> "speedup_ratio"), unless two
    shown paths end the same way (then both stay whole)."""
    last = [p.rsplit(".", 1)[-1] for p in paths]
    return {p: (s if last.count(s) == 1 else p) for p, s in zip(paths, last, strict=True)}


def build_setting_values(
    recipes: Sequence[Mapping[str, Any] | None], paths: list[str], *, width: int
) -> list[str]:
    """Per run, its values of the settings that differed (the first LEGEND_SETTINGS, "+N" for
    more): "engine.speedup_ratio=20"; when one run's text would pass `width` characters, every
    run's settings are named by their last segment ("concurrencies=[4], speedup_ratio=2") so
    the values stay visible. "" for a run without a recipe, or when no setting differed."""
    shown = paths[:LEGEND_SETTINGS]
    more = f" +{len(paths) - len(shown)}" if len(paths) > len(shown) else ""

    def render(names: dict[str, str]) -> list[str]:
        out = []
        for recipe in recipes:
            if recipe is None or not shown:
                out.append("")
                continue
            flat = flatten(recipe)
            values = ", ".join(
                f"{names[p]}={render_value(flat[p]) if p in flat else '(unset)'}" for p in shown
            )
            out.append(values + more)
        return out

    whole = render({p: p for p in shown})
    if all(len(v) <= width for v in whole):
        return whole
    return render(_short_names(shown))


def build_legends(
    labels: list[str], recipes: Sequence[Mapping[str, Any] | None], paths: list[str]
) -> list[str]:
    """Per run, its label and its values of the settings that differed between the runs
    (`build_setting_values`), so a chart's legend says what each curve changed, not only a job
    id: "4243: roles.agg.workers=4". A run without a recipe keeps its label."""
    room = LEGEND_CHARS - 2 - max((len(label) for label in labels), default=0)
    values = build_setting_values(recipes, paths, width=room)
    return [f"{label}: {v}" if v else label for label, v in zip(labels, values, strict=True)]


def render_value(value: Any) -> str:
    if isinstance(value, str):
        return value if value and " " not in value else json.dumps(value)
    return json.dumps(value, sort_keys=True, default=str)


def build_recipe_diff(baseline: Mapping[str, Any], other: Mapping[str, Any]) -> list[SettingChange]:
    a = {k: v for k, v in flatten(baseline).items() if k.split(".")[0] not in IGNORED_PATHS}
    b = {k: v for k, v in flatten(other).items() if k.split(".")[0] not in IGNORED_PATHS}
    changes = []
    for path in sorted(set(a) | set(b)):
        va, vb = a.get(path, _MISSING), b.get(path, _MISSING)
        if va == vb:
            continue
        if va is _MISSING:
            changes.append(SettingChange(path, None, vb, "added"))
        elif vb is _MISSING:
            changes.append(SettingChange(path, va, None, "removed"))
        else:
            changes.append(SettingChange(path, va, vb, "changed"))
    return changes


def _render_change(c: SettingChange) -> str:
    if c.kind == "added":
        return f"{c.path} (unset) -> {render_value(c.value)}"
    if c.kind == "removed":
        return f"{c.path} {render_value(c.baseline)} -> (unset)"
    return f"{c.path} {render_value(c.baseline)} -> {render_value(c.value)}"


def render_verdict(changes: list[SettingChange] | None) -> str:
    """One line: what differed in the recipes (None: a recipe is missing)."""
    if changes is None:
        return "recipe unknown (no config.yaml beside a rollup): cannot say what differed"
    if not changes:
        return "same recipe: no setting differed"
    if len(changes) == 1:
        return f"one setting differed: {_render_change(changes[0])}"
    shown = "; ".join(_render_change(c) for c in changes[:12])
    more = f"; ... and {len(changes) - 12} more" if len(changes) > 12 else ""
    return f"{len(changes)} settings differed (confounded): {shown}{more}"


def _version_values(fingerprints: Mapping[str, Any]) -> dict[str, set[str]]:
    values: dict[str, set[str]] = {}

    def add(key: str, value: Any) -> None:
        if value is not None:
            values.setdefault(key, set()).add(str(value))

    for fp in fingerprints.values():
        if not isinstance(fp, Mapping) or "unreadable" in fp:
            continue
        flat = flatten(fp)
        for name in VERSION_FIELDS:
            add(name, flat.get(name))
        for name, version in (fp.get("frameworks") or {}).items():
            add(str(name), version)
        for packages in (fp.get("pip_packages") or {}).values():
            for item in packages if isinstance(packages, list) else ():
                pkg, sep, version = str(item).partition("==")
                if sep:
                    add(f"pip {pkg.lower()}", version)
    return values


def build_version_drift(
    baseline: Mapping[str, Any] | None,
    other: Mapping[str, Any] | None,
    *,
    baseline_srtctl: str | None = None,
    other_srtctl: str | None = None,
) -> list[str]:
    """One line per version that differs (`dynamo 1.6.1 -> 1.7.0`); frameworks and the runtime
    first, pip packages after (at most MAX_PACKAGES, then a count)."""
    lines = []
    if baseline_srtctl and other_srtctl and baseline_srtctl != other_srtctl:
        lines.append(f"srtctl {baseline_srtctl} -> {other_srtctl}")
    if not baseline or not other:
        if baseline or other:
            lines.append("fingerprints missing on one side: versions not compared")
        return lines
    a, b = _version_values(baseline), _version_values(other)
    packages: list[str] = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, set()), b.get(key, set())
        if va == vb:
            continue
        line = f"{key} {'/'.join(sorted(va)) or '(none)'} -> {'/'.join(sorted(vb)) or '(none)'}"
        (packages if key.startswith("pip ") else lines).append(line)
    lines.extend(packages[:MAX_PACKAGES])
    if len(packages) > MAX_PACKAGES:
        lines.append(f"... and {len(packages) - MAX_PACKAGES} more pip packages")
    return lines

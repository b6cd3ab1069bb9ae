"""Raw-document steps between the schema gate and typing (docs/recipes.md#engine-and-roles).

An engine mapping without ``type`` means SGLang; per-role keys inside it are refused with a
message that says where they belong. Digit strings in ``benchmark.concurrencies`` lists become
integers (the same list may also be written as the string ``"4x8"``).

The engine-config expansions of docs/recipes.md#engine-config-expansions (span-logging env, TRT-LLM
perf-stat defaults) are engine defaults and live in the planner's command builders, so a loaded
Recipe is exactly what the user wrote plus cluster defaults.
"""

from __future__ import annotations

import copy
from typing import Any

from srt_schema.errors import Issue

__all__ = ["normalize_engines"]

_PER_ROLE_SUFFIXES = ("_environment", "_extra_args", "_config")


def _per_role_keys(engine: dict[str, Any]) -> list[str]:
    return sorted(
        k
        for k in engine
        if isinstance(k, str) and (k.endswith(_PER_ROLE_SUFFIXES) or k == "kv_events_config")
    )


def _normalize_one(value: Any, path: str, file: str, issues: list[Issue]) -> Any:
    if not isinstance(value, dict):
        return value
    out = dict(value)
    out.setdefault("type", "sglang")
    keys = _per_role_keys(out)
    if keys:
        issues.append(
            Issue(
                file=file,
                path=f"{path}.{keys[0]}",
                message=(
                    "an engine mapping carries engine-wide knobs only; per-role settings "
                    f"({', '.join(keys)}) live under roles.<role> (env, args, extra_args, "
                    "kv_events)"
                ),
            )
        )
        for key in keys:
            out.pop(key)
    if "roles" in out:
        issues.append(
            Issue(
                file=file,
                path=f"{path}.roles",
                message="engine.roles is bound from the recipe's roles block; declare roles at "
                "the top level",
            )
        )
        out.pop("roles")
    return out


def _int_text(value: Any) -> Any:
    """``"4"`` -> ``4`` (concurrency lists are often written as strings, like ``"4x8"``)."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return value


def normalize_engines(doc: dict[str, Any], *, file: str) -> tuple[dict[str, Any], list[Issue]]:
    """A copy with every engine mapping given its default ``type``, and the issues found."""
    out = copy.deepcopy(doc)
    issues: list[Issue] = []
    if "engine" in out:
        out["engine"] = _normalize_one(out["engine"], "$.engine", file, issues)
    bench = out.get("benchmark")
    if isinstance(bench, dict) and isinstance(bench.get("concurrencies"), list):
        bench["concurrencies"] = [_int_text(c) for c in bench["concurrencies"]]
    roles = out.get("roles")
    if isinstance(roles, dict):
        for name, role in roles.items():
            if isinstance(role, dict) and "engine" in role:
                role["engine"] = _normalize_one(
                    role["engine"], f"$.roles.{name}.engine", file, issues
                )
    return out, issues

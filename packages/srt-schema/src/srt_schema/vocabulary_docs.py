"""``docs/vocabularies.md``, rendered from the tables of ``srt_schema.registry`` and
``srt_schema.roles`` (pure; a test keeps the committed file equal to this rendering).

Regenerate: ``uv run --frozen pytest tests/test_vocabularies_doc.py --update-golden``.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from srt_schema.registry import (
    BENCHMARK_FIELDS,
    BENCHMARK_SHARED_FIELDS,
    FRONTENDS,
    SERVICE_KINDS,
    FrontendInfo,
)
from srt_schema.roles import ENGINE_CAPABILITIES

__all__ = ["render_vocabularies"]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _yes(value: bool) -> str:
    return "yes" if value else ""


def _code(values: Sequence[str]) -> str:
    return ", ".join(f"`{v}`" for v in values) or "any"


def _launches(info: FrontendInfo) -> str:
    if not info.program:
        return ""
    words = ["python", "-m", info.program] if info.module else [info.program]
    return "`" + " ".join([*words, *info.subcommand]) + "`"


def render_vocabularies() -> str:
    out = [
        "# Vocabularies",
        "",
        "GENERATED from `srt_schema.registry` and `srt_schema.roles` - do not edit; regenerate",
        "with `uv run --frozen pytest tests/test_vocabularies_doc.py --update-golden`.",
        "The validator, the planner and `srtctl migrate` read these same tables.",
        "",
        "## Service kinds (`services[].type`)",
        "",
    ]
    out += _table(
        ["type", "placement", "start", "critical", "infra class", "ports", "readiness", "options"],
        [
            [
                f"`{name}`",
                kind.placement,
                kind.start,
                _yes(kind.critical),
                _yes(kind.infra_class),
                ", ".join(f"{port_name} {port}" for port_name, port in kind.ports),
                kind.readiness + (f" `{kind.readiness_path}`" if kind.readiness_path else ""),
                ", ".join(kind.options),
            ]
            for name, kind in SERVICE_KINDS.items()
        ],
    )
    out += [
        "",
        "## Frontends (`frontend.type`)",
        "",
        "Health-gate family: how the supervisor knows the deployment is ready. Serving: who",
        "serves the public port (a frontend process, the aggregate worker itself, the worker",
        "when aggregated and a frontend process when disaggregated, or nothing). Installs from:",
        "the PyPI distribution that runs the frontend on a machine without GPUs, as the stand-in",
        "engine mode (`srtctl apply --stand-in-engines`) needs it.",
        "",
    ]
    out += _table(
        ["type", "health-gate family", "serving", "launches", "engines", "installs from"],
        [
            [
                f"`{name}`" + (f" (= `{info.alias_of}`)" if info.alias_of else ""),
                info.family,
                info.serving,
                _launches(info),
                _code(info.engines),
                f"`{info.package}`" if info.package else info.not_installable or "-",
            ]
            for name, info in FRONTENDS.items()
        ],
    )
    out += [
        "",
        "## Benchmark types (`benchmark.type`)",
        "",
        f"Every type accepts {_code(sorted(BENCHMARK_SHARED_FIELDS))}.",
        "",
    ]
    out += _table(
        ["type", "fields it reads beyond those"],
        [
            [f"`{name}`", _code(sorted(BENCHMARK_FIELDS[name])) if BENCHMARK_FIELDS[name] else ""]
            for name in sorted(BENCHMARK_FIELDS)
        ],
    )
    out += ["", "## Engine capabilities (`engine.type`)", ""]
    rows = {name: msgspec.structs.asdict(caps) for name, caps in ENGINE_CAPABILITIES.items()}
    flags = list(next(iter(rows.values())))
    out += _table(
        ["engine", *flags],
        [[f"`{name}`", *(_yes(bool(row[f])) for f in flags)] for name, row in rows.items()],
    )
    return "\n".join(out) + "\n"

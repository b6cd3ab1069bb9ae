"""Rules for ``benchmark`` and the remaining blocks (cli-and-config.md §3.11.8-9)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec

from srt_schema.errors import Issue
from srt_schema.formatting import unknown_placeholders
from srt_schema.recipe import BenchmarkConfig
from srt_schema.registry import BENCHMARK_FIELDS, BENCHMARK_SHARED_FIELDS
from srt_schema.structural import join_path
from srt_schema.validate.context import Context

__all__ = ["RULES", "parse_concurrencies"]

_DEFAULTS: dict[str, Any] = msgspec.to_builtins(BenchmarkConfig())
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_concurrencies(value: tuple[int, ...] | str | None) -> tuple[int, ...] | None:
    """``[4, 8]`` or ``"4x8"`` -> ``(4, 8)``; None stays None. Raises ValueError when malformed."""
    if value is None:
        return None
    if isinstance(value, str):
        parts = value.split("x")
        if not all(p.strip().isdigit() for p in parts):
            raise ValueError(value)
        return tuple(int(p) for p in parts)
    return tuple(value)


def benchmark(ctx: Context) -> Iterator[Issue]:
    bench = ctx.recipe.benchmark
    fields = BENCHMARK_FIELDS.get(bench.type)
    if fields is None:
        yield ctx.issue(
            "$.benchmark.type",
            f"unknown benchmark.type '{bench.type}'; available: "
            f"{', '.join(sorted(BENCHMARK_FIELDS))}",
        )
        return
    values: dict[str, Any] = msgspec.to_builtins(bench)
    accepted = fields | BENCHMARK_SHARED_FIELDS
    unused = sorted(k for k, v in values.items() if k not in accepted and v != _DEFAULTS[k])
    if unused:
        yield ctx.issue(
            f"$.benchmark.{unused[0]}",
            f"benchmark.type '{bench.type}' does not use {', '.join(unused)}; fields it accepts: "
            f"{', '.join(sorted(accepted))}",
        )
    try:
        conc = parse_concurrencies(bench.concurrencies)
    except ValueError:
        yield ctx.issue(
            "$.benchmark.concurrencies",
            f"'{bench.concurrencies}' is not a concurrency list; write [4, 8] or \"4x8\"",
        )
        conc = None
    if conc is not None and (not conc or any(c < 1 for c in conc) or len(set(conc)) != len(conc)):
        yield ctx.issue(
            "$.benchmark.concurrencies", "must be a non-empty list of unique positive integers"
        )
    if bench.type == "custom" and not bench.command:
        yield ctx.issue("$.benchmark.command", "a custom benchmark needs `command:`")
    if bench.type == "sa-bench" and (bench.isl is None or bench.osl is None or conc is None):
        missing = [
            k
            for k, v in (("isl", bench.isl), ("osl", bench.osl), ("concurrencies", conc))
            if v is None
        ]
        yield ctx.issue(f"$.benchmark.{missing[0]}", f"sa-bench needs {', '.join(missing)}")
    if isinstance(bench.req_rate, str) and bench.req_rate != "inf":
        try:
            float(bench.req_rate)
        except ValueError:
            yield ctx.issue(
                "$.benchmark.req_rate", f"'{bench.req_rate}' is not a rate; use a number or inf"
            )


def misc(ctx: Context) -> Iterator[Issue]:
    host = ctx.recipe.host_setup
    for key, entries in (("commands", host.commands), ("teardown", host.teardown)):
        for i, entry in enumerate(entries):
            if not entry.strip():
                yield ctx.issue(f"$.host_setup.{key}[{i}]", f"host_setup.{key}[{i}] is empty")
    if host.timeout_seconds < 1:
        yield ctx.issue("$.host_setup.timeout_seconds", "must be at least 1")
    post = ctx.recipe.post_eval
    for i, name in enumerate(post.passthrough_env):
        if not _IDENTIFIER.match(name):
            yield ctx.issue(
                f"$.post_eval.passthrough_env[{i}]",
                f"'{name}' is not an environment variable name",
            )
    if post.command is not None and not post.command:
        yield ctx.issue("$.post_eval.command", "must not be empty; drop the key")
    for i, pattern in enumerate(ctx.recipe.health_check.extra_fatal_log_patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            yield ctx.issue(
                f"$.health_check.extra_fatal_log_patterns[{i}]",
                f"{pattern!r} is not a valid regular expression: {exc}",
            )
    hc = ctx.recipe.health_check
    if hc.max_attempts < 1:
        yield ctx.issue("$.health_check.max_attempts", "must be at least 1")
    if hc.interval_seconds < 1:
        yield ctx.issue("$.health_check.interval_seconds", "must be at least 1")


def templates(ctx: Context) -> Iterator[Issue]:
    """FormattablePaths may use only the known placeholders (caught at load, not in the job)."""
    checks = [("$.output.log_dir", ctx.recipe.output.log_dir)]
    for host, container in ctx.recipe.container_mounts.items():
        checks.append((join_path("$.container_mounts", host), host))
        checks.append((join_path("$.container_mounts", host), container))
    for path, template in checks:
        unknown = unknown_placeholders(template)
        if unknown:
            yield ctx.issue(
                path,
                f"unknown placeholder {{{unknown[0]}}} in {template!r}; available: "
                "{job_id}, {run_name}, {head_node_ip}, {log_dir}, {model_path}, "
                "{container_image}, {gpus_per_node}",
            )


RULES = (benchmark, misc, templates)

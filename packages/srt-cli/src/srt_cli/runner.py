"""Run a step for every source; a failing file is reported and the rest still run (Q6).

The exit code is the highest of the failures (0 when all succeeded).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

import click

from srt_cli.errors import CliError
from srt_cli.inputs import Source

__all__ = ["for_each_source"]

T = TypeVar("T")


def for_each_source(
    sources: Sequence[Source],
    step: Callable[[Source], T],
    *,
    on_error: Callable[[Source, CliError], None] | None = None,
) -> list[T]:
    """``step(source)`` for each source; raises ``click.exceptions.Exit`` if any failed."""
    results: list[T] = []
    worst = 0
    failed = 0
    for source in sources:
        try:
            results.append(step(source))
        except CliError as exc:
            failed += 1
            worst = max(worst, exc.exit_code)
            if on_error is not None:
                on_error(source, exc)
            else:
                exc.show()
    if failed and len(sources) > 1:
        click.echo(f"{failed} of {len(sources)} file(s) failed", file=sys.stderr)
    if worst:
        raise click.exceptions.Exit(worst)
    return results

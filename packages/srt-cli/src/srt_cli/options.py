"""Options shared by several commands (``-f``, ``--set``/``--unset``, ``--json``, ``-o``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from srt_cli.errors import translated

if TYPE_CHECKING:
    from srt_schema.setpaths import PathOverride

__all__ = [
    "file_option",
    "json_option",
    "output_option",
    "parse_overrides",
    "set_options",
    "skip_flag_check_option",
    "stand_in_option",
]

F = TypeVar("F", bound=Callable[..., Any])

FILE_HELP = (
    "Recipe file, directory (every *.yaml below it), or - for stdin; append :SELECTOR to pick "
    "override variants (recipe.yaml:override_tp8, recipe.yaml:'*mtp*'). Repeatable."
)


def file_option(*, multiple: bool = True, required: bool = True) -> Callable[[F], F]:
    return click.option(
        "-f",
        "--file",
        "files",
        required=required,
        multiple=multiple,
        metavar="PATH[:SELECTOR]",
        type=click.Path(),
        help=FILE_HELP,
    )


def set_options(func: F) -> F:
    func = click.option(
        "--unset",
        "unsets",
        multiple=True,
        metavar="KEY",
        help="Remove a key before loading (a.b.c, a.b[0]); a missing key is not an error.",
    )(func)
    return click.option(
        "--set",
        "sets",
        multiple=True,
        metavar="KEY=VALUE",
        help="Set a key before loading; VALUE is YAML (720 is an int, '\"720\"' a string).",
    )(func)


STAND_IN_HELP = (
    "Replace every GPU engine by a stand-in and keep the rest of the recipe's plan as it is "
    "(frontends and routers, nginx, services, health gate, benchmark, telemetry, ports, served "
    "name): behind the Dynamo frontend a Dynamo mocker registered where the engine registers, "
    "else an OpenAI-compatible stand-in on the worker's port. No GPU or model weights needed; "
    "the benchmark tokenizes with the stand-in model. With --local every node is this machine."
)


def stand_in_option(func: F) -> F:
    return click.option("--stand-in-engines", "stand_in", is_flag=True, help=STAND_IN_HELP)(func)


def json_option(help_text: str) -> Callable[[F], F]:
    return click.option("--json", "as_json", is_flag=True, help=help_text)


def output_option(func: F) -> F:
    return click.option(
        "-o",
        "--output",
        "output",
        type=click.Path(file_okay=False),
        help="Output base: jobs go to OUTPUT/<job_id>/ (default: srtslurm.yaml output_dir, "
        "else ./outputs).",
    )(func)


def parse_overrides(sets: tuple[str, ...], unsets: tuple[str, ...]) -> tuple[PathOverride, ...]:
    """``--set`` then ``--unset`` values, parsed once (a bad one is a usage error, exit 2)."""
    if not sets and not unsets:
        return ()
    from srt_schema.setpaths import parse_set, parse_unset

    with translated():
        return (*(parse_set(s) for s in sets), *(parse_unset(u) for u in unsets))


def skip_flag_check_option(func: F) -> F:
    """``--skip-flag-check``: plan without checking engine/router flags (docs/flag-check.md)."""
    return click.option(
        "--skip-flag-check",
        is_flag=True,
        help=(
            "Do not check engine and router flags against the catalog of the version that runs "
            "them (for a flag srt's catalogs do not know yet); the plan records the skip."
        ),
    )(func)

"""The ``srtctl`` click group: commands are imported only when they run (fast ``--help``).

Every command lives in ``srt_cli.commands.<name>``; this module imports only click and the tiny
``srt_cli`` helpers (``srt_cli.environment``, the edge, only when a command runs). Shell
completion is click's: ``eval "$(_SRTCTL_COMPLETE=bash_source srtctl)"``.
"""

from __future__ import annotations

import errno
import gc
import importlib

import click

from srt_cli.errors import InternalError
from srt_cli.version import version_line

__all__ = ["cli", "main"]

#: command name -> (module under srt_cli.commands, one-line help shown by ``srtctl --help``)
COMMANDS: dict[str, tuple[str, str]] = {
    "apply": ("apply", "Submit a recipe to Slurm (or run it here with --local)."),
    "cancel": ("cancel", "Cancel a job (scancel, or SIGTERM to a local run's supervisor)."),
    "compare": ("compare", "KPI deltas with 95% CIs between runs or sweeps, and what differed."),
    "dry-run": ("dry_run", "Show the sbatch script and the complete job plan; submit nothing."),
    "get": ("list", "The same as list (kubectl's spelling)."),
    "list": ("list", "The jobs of the output folder: id, name, status, stage, started, exit code."),
    "logs": ("logs", "List a job's log files, or print and follow one process's log."),
    "mcp": ("mcp", "Serve srtctl's tools to agents: a Model Context Protocol server over stdio."),
    "migrate": ("migrate", "Rewrite schema-1 (v1) recipes as schema 2, comments kept."),
    "monitor": ("monitor", "A live table of your jobs (squeue --me and local runs)."),
    "preflight": (
        "preflight",
        "Check model paths, images and binaries exist, probe engine versions; submit nothing.",
    ),
    "render": ("render", "Write sbatch_script.sh, config.yaml and plan.json into a folder."),
    "report": ("report", "One HTML page for a sweep: Pareto frontier, curves, validity, links."),
    "resolve-override": (
        "resolve_override",
        "One recipe per override variant.",
    ),
    "schema": ("schema", "Print the recipe (or srtslurm.yaml) JSON Schema, for editors."),
    "status": ("status", "Stage, workers ready, benchmark phase and results of one job."),
    "status-server": (
        "status_server",
        "Run a local status collector that reporting.status.endpoint can point at.",
    ),
    "validate": ("validate", "Load and plan recipes; print nothing but errors."),
    "wait": ("wait", "Block until jobs end; the exit code says completed, failed, invalid..."),
}


def _debug(ctx: click.Context) -> bool:
    """SRTCTL_DEBUG=1: an internal error shows its traceback instead of the one-line report."""
    from srt_cli.environment import Edge  # only when an error is being reported

    edge = ctx.obj
    return isinstance(edge, Edge) and bool(edge.environ.get("SRTCTL_DEBUG"))


class LazyGroup(click.Group):
    """A group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f"srt_cli.commands.{entry[0]}")
        command: click.Command = module.command
        return command

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; an exception nothing translated is one line and exit 1 (a bug)."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort, EOFError):
            raise
        except Exception as exc:
            if _debug(ctx) or (isinstance(exc, OSError) and exc.errno == errno.EPIPE):
                raise  # EPIPE: stdout closed (`srtctl ... | head`), click ends quietly
            raise InternalError.from_exception(ctx.invoked_subcommand, exc) from exc

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The short help comes from the table, so `srtctl --help` imports no command module.
        rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(version_line())
    ctx.exit(0)


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    no_args_is_help=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="""\b
Examples:
  srtctl validate -f recipes/
  srtctl dry-run -f recipe.yaml --set benchmark.isl=2048
  srtctl apply -f recipe.yaml:override_tp8 --json
  srtctl migrate -f old-recipes/ --in-place
  srtctl list --json

\b
Machine output: --json (one JSON document on stdout) on apply, cancel, compare, dry-run,
list, logs, monitor, status, validate and wait. -o/--output is where files go (the
output folder; for migrate and schema a file), never an output format.

\b
Exit codes: 0 ok, 2 usage error or invalid recipe, 3 planning error,
            4 Slurm, runtime or preflight error.
Shell completion (bash): eval "$(_SRTCTL_COMPLETE=bash_source srtctl)"
""",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the version, the recipe schema versions and the lockfile version.",
)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """srtctl: one YAML recipe to a benchmark of an LLM serving deployment on Slurm.

    The cluster config (srtslurm.yaml) is taken from $SRTSLURM_CONFIG, else from the current
    folder or the nearest parent that has one.
    """
    if ctx.invoked_subcommand is None:  # `srtctl` alone: the help, and success
        click.echo(ctx.get_help())
        ctx.exit(0)
    from srt_cli.environment import read_edge  # pathlib and friends: not for `srtctl --help`

    ctx.obj = read_edge()


def main() -> None:
    from srt_cli.redacting import install

    install()  # every line printed goes through the one redactor
    try:
        cli.main(prog_name="srtctl")
    finally:
        # The process ends here. Frozen objects are skipped by the interpreter's last garbage
        # collection over every object of every loaded module: ~10 ms of a ~100 ms dry-run
        # (benchmarks/cli_startup.py). atexit handlers, stream flushes and reference-counted
        # finalizers still run; only cyclic garbage is left to the OS.
        gc.freeze()

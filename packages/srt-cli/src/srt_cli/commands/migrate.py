"""``srtctl migrate``: rewrite schema-1 (v1) recipes as schema 2, comments and key order kept."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from srt_cli.errors import EXIT_USAGE, CliError, CliUsageError
from srt_cli.inputs import expand_spec, read_file, read_stdin
from srt_cli.safepaths import writing

EPILOG = """\b
Examples:
  srtctl migrate -f old.yaml > new.yaml
  srtctl migrate -f old.yaml -o recipes/new.yaml
  srtctl migrate -f recipes/ --in-place
"""


def _files(specs: tuple[str, ...]) -> list[Path | None]:
    found: list[Path | None] = []
    for spec in specs:
        for path, selector in expand_spec(spec):
            if selector is not None:
                raise CliUsageError(f"-f {spec!r}: migrate takes whole files, not selectors")
            found.append(path)
    paths = sorted({p for p in found if p is not None})
    return [*paths, *([None] if None in found else [])]


@click.command("migrate", epilog=EPILOG)
@click.option(
    "-f",
    "--file",
    "files",
    required=True,
    multiple=True,
    metavar="PATH",
    help="A v1 recipe, a folder (every *.yaml below it) or - for stdin. Repeatable.",
)
@click.option("--in-place", is_flag=True, help="Rewrite each file that changes, in place.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the migrated recipe here (one input file only).",
)
def command(files: tuple[str, ...], in_place: bool, output: Path | None) -> None:
    """Migrate v1 recipes (backend:, resources.prefill_nodes, infra: ...) to schema 2.

    Without --in-place or --output the single input is printed on stdout and the notes go to
    stderr. A file that cannot be migrated is reported and the others still run; the exit code
    is then 2.
    """
    from srt_schema.errors import MigrationError
    from srt_schema.migrate import migrate_text

    if in_place and output is not None:
        raise CliUsageError("choose either --in-place or --output, not both")
    paths = _files(files)
    if not in_place and len(paths) != 1:
        hint = "--output takes a single file" if output else "printing to stdout needs one file"
        raise CliUsageError(f"{hint}; got {len(paths)}; use --in-place for many")
    if in_place and None in paths:
        raise CliUsageError("--in-place needs files, not stdin")
    migrated = failed = 0
    for path in paths:
        label = str(path) if path is not None else "<stdin>"
        try:
            text = read_stdin(sys.stdin) if path is None else read_file(path)
            result = migrate_text(text, file=label)
        except (MigrationError, CliError) as exc:
            failed += 1
            reason = exc.message if isinstance(exc, MigrationError) else exc.format_message()
            reason = reason.removeprefix(f"{label}: ")
            click.echo(f"✗ {label}: not migrated: {reason} (fix the recipe, then re-run)")
            continue
        migrated += 1
        summary = ", ".join(result.notes) if result.changed else "already current"
        change = f"schema {result.from_version} -> {result.to_version} ({summary})"
        if not in_place and output is None:
            click.echo(result.text, nl=False)
            click.echo(f"✓ {label}: {change}", err=True)
            continue
        target = output if output is not None else path
        assert target is not None
        if result.changed or output is not None:
            fix = "choose a file you can write with -o/--output"
            with writing(target, what="the migrated recipe", fix=fix):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(result.text)
        click.echo(f"✓ {target}: {change}")
    if failed:
        click.echo(f"\n{migrated} migrated, {failed} not migrated")
        raise click.exceptions.Exit(EXIT_USAGE)

"""``srtctl resolve-override``: one recipe per variant of an override file (files or stdout)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from srt_cli.environment import Edge
from srt_cli.errors import CliUsageError, InvalidRecipeError, translated
from srt_cli.inputs import read_sources
from srt_cli.options import parse_overrides, set_options

EPILOG = """\b
Examples:
  srtctl resolve-override -f overrides.yaml --stdout
  srtctl resolve-override -f overrides.yaml:override_tp8 --stdout > tp8.yaml
  srtctl resolve-override -f overrides.yaml            # writes ./overrides_<variant>.yaml files
  srtctl resolve-override -f overrides.yaml -o out/    # writes out/overrides_<variant>.yaml
"""


@click.command("resolve-override", epilog=EPILOG)
@click.option(
    "-f",
    "--file",
    "spec",
    required=True,
    metavar="PATH[:SELECTOR]",
    help="An override file (base: + override_*/zip_override_*), optionally :SELECTOR.",
)
@click.option("--stdout", "to_stdout", is_flag=True, help="Print the variants instead of files.")
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The folder the variant files go to (default: the current folder).",
)
@set_options
@click.pass_obj
def command(
    edge: Edge,
    *,
    spec: str,
    to_stdout: bool,
    output: Path | None,
    sets: tuple[str, ...],
    unsets: tuple[str, ...],
) -> None:
    """Expand the variants of an override file into plain recipes.

    Without --stdout each variant is written as <stem>_<variant>.yaml into the current folder (or
    the folder given with -o), never beside the source (which may be read-only). Each
    keeps the comments and key order of `base:`; keys only the variant has come last. The
    variants are not validated here (use validate or dry-run for that).
    """
    from srt_cli.roundtrip import dump_roundtrip, load_roundtrip, synced
    from srt_schema.overrides import expand_variants, is_override_file
    from srt_schema.setpaths import apply_overrides
    from srt_schema.yamlio import parse_yaml

    if to_stdout and output is not None:
        raise CliUsageError("choose either --stdout or -o/--output, not both")
    overrides = parse_overrides(sets, unsets)
    sources = read_sources((spec,), sys.stdin)
    if len(sources) != 1:
        raise CliUsageError(f"-f {spec}: resolve-override takes one override file")
    source = sources[0]
    with translated():
        raw = parse_yaml(source.text, file=source.label)
        if not isinstance(raw, dict) or not is_override_file(raw):
            raise InvalidRecipeError(
                f"{source.label}: not an override file (it has no top-level `base:`); "
                "plain recipes need no resolving"
            )
        doc = apply_overrides(raw, overrides)
        variants = expand_variants(doc, file=source.label, selector=source.selector)
    base = load_roundtrip(source.text)["base"]

    def render(document: dict[str, Any]) -> str:
        return dump_roundtrip(synced(base, document))

    if to_stdout:
        for position, variant in enumerate(variants):
            if len(variants) > 1:
                click.echo(("\n" if position else "") + f"# --- {variant.suffix} ---")
            click.echo(render(variant.document), nl=False)
        return
    folder = Path(edge.cwd) if output is None else output
    stem = source.path.stem if source.path is not None else "stdin"
    from srt_cli.safepaths import check_inside, writing

    fix = "name the variant override_<letters, digits, '.', '_', '-'> or use --stdout"
    targets = [
        check_inside(
            folder / f"{stem}_{variant.suffix}.yaml",
            folder,
            what=f"the file of variant {variant.selector}",
            fix=fix,
        )
        for variant in variants
    ]
    for variant, target in zip(variants, targets, strict=True):
        with writing(target, what="the variant file", fix="use --stdout, or a writable folder"):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(render(variant.document))
        click.echo(f"wrote {target}")

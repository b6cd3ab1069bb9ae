"""``srtctl schema``: the recipe (or srtslurm.yaml) JSON Schema, for editors."""

from __future__ import annotations

from pathlib import Path

import click

EPILOG = """\b
Examples:
  srtctl schema > recipe.schema.json
  srtctl schema --cluster --output .vscode/srtslurm.schema.json
  # then, first line of a recipe:  # yaml-language-server: $schema=recipe.schema.json
"""


@click.command("schema", epilog=EPILOG)
@click.option("--cluster", is_flag=True, help="The srtslurm.yaml schema instead of the recipe's.")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file (parent folders are created) instead of stdout.",
)
def command(cluster: bool, output: Path | None) -> None:
    """Print the JSON Schema (draft 2020-12) of recipes, or of srtslurm.yaml with --cluster."""
    from srt_schema.schemas import schema_text

    text = schema_text("cluster" if cluster else "recipe")
    if not text.endswith("\n"):
        text += "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    from srt_cli.safepaths import writing

    with writing(output, what="the schema file", fix="choose a file you can write with --output"):
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)
    click.echo(f"wrote {output}", err=True)

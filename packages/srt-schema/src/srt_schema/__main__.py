"""``srt-schema validate FILE...``: load recipes with only srt-schema installed.

Exit 0 when every file loads, 2 otherwise. ``--json`` prints one object per file:
``{"file": ..., "ok": bool, "jobs": N, "errors": [{"file", "path", "message"}]}``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import msgspec

from srt_schema.discovery import find_cluster_config, read_cluster_config
from srt_schema.errors import Issue, RecipeError
from srt_schema.load import load_recipe_text
from srt_schema.yamlio import decode_yaml_bytes

EXIT_OK = 0
EXIT_INVALID = 2


class _Result(msgspec.Struct, frozen=True, kw_only=True):
    file: str
    ok: bool
    jobs: int
    errors: tuple[Issue, ...]


def _files(args: list[str]) -> list[Path]:
    out: list[Path] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            out.extend(sorted({*path.rglob("*.yaml"), *path.rglob("*.yml")}))
        else:
            out.append(path)
    return out


def _validate(path: Path, cluster: object) -> _Result:
    file = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        issue = Issue(file=file, path="$", message=f"cannot read: {exc.strerror or exc}")
        return _Result(file=file, ok=False, jobs=0, errors=(issue,))
    try:
        text = decode_yaml_bytes(data, file=file)
        jobs = load_recipe_text(text, file=file, cluster=cluster)  # type: ignore[arg-type]
    except RecipeError as exc:
        return _Result(file=file, ok=False, jobs=0, errors=exc.issues)
    return _Result(file=file, ok=True, jobs=len(jobs), errors=())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="srt-schema",
        description="Validate srt recipes (schema 2) without installing the rest of srt.",
        epilog="examples:\n  srt-schema validate recipes/agg.yaml\n"
        "  srt-schema validate --json recipes/\n"
        "  srt-schema validate --cluster srtslurm.yaml recipe.yaml",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    validate = sub.add_parser("validate", help="load every file; exit 2 if any does not load")
    validate.add_argument("files", nargs="+", help="recipe files or folders")
    validate.add_argument("--json", action="store_true", help="one JSON object per file")
    validate.add_argument(
        "--cluster",
        help="srtslurm.yaml to apply (default: $SRTSLURM_CONFIG, then ./srtslurm.yaml and parents)",
    )
    validate.add_argument(
        "--no-cluster", action="store_true", help="do not apply any cluster config"
    )
    args = parser.parse_args(argv)
    try:
        if args.no_cluster:
            cluster = None
        else:
            path = (
                Path(args.cluster) if args.cluster else find_cluster_config(Path.cwd(), os.environ)
            )
            cluster = read_cluster_config(path) if path is not None else None
    except RecipeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    failed = 0
    for path in _files(args.files):
        result = _validate(path, cluster)
        failed += not result.ok
        if args.json:
            sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
        elif not result.ok:
            for issue in result.errors:
                print(issue.render(), file=sys.stderr)
    return EXIT_INVALID if failed else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())

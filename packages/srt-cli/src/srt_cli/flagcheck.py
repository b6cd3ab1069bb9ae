"""The flag check's shell: reads the flag catalogs and runs the pure check (docs/flag-check.md).

The catalogs are data files beside the argv builders (``srt_planner/flag_catalogs``,
the shared architecture, section 2); srt-planner does no I/O, so reading them is the CLI's
job. They are
read on the first check of a command, never at ``srtctl`` start-up (this module is imported
inside ``Session.plan_source``).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import click

from srt_cli.errors import InvalidRecipeError

if TYPE_CHECKING:
    from srt_cli.planning import PlannedJob
    from srt_planner.flagcheck import FlagCatalog, FlagFinding, Installed
    from srt_schema.cluster import ClusterConfig

__all__ = ["enforce", "findings_of", "host_versions", "load_catalogs"]


def host_versions(cluster: ClusterConfig) -> Installed | None:
    """Versions a ``container_runtime: none`` job runs: this interpreter's packages when the
    job uses it (``runtime_python`` unset); another interpreter's are read only by
    ``srtctl preflight``'s probe (srt_cli.probing)."""
    if cluster.container_runtime != "none" or cluster.runtime_python is not None:
        return None
    from importlib import metadata

    from srt_planner.flagcheck import FAMILY_DISTRIBUTIONS, Installed

    out: dict[str, str] = {}
    for family, distribution in FAMILY_DISTRIBUTIONS.items():
        try:
            out[family] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return Installed(where="this host's install", versions=out)


class _Catalogs(Mapping[str, Mapping[str, "FlagCatalog"]]):
    """``tool -> version -> catalog``, each tool's files read on first use (a plan with only a
    Dynamo frontend reads five small files, not all of them)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._files: dict[str, list[Path]] = {}
        for path in sorted(folder.glob("*.json.gz")):
            tool = path.name[: -len(".json.gz")].rsplit("-", 1)[0]
            self._files.setdefault(tool, []).append(path)
        self._loaded: dict[str, dict[str, FlagCatalog]] = {}

    def __getitem__(self, tool: str) -> Mapping[str, FlagCatalog]:
        if tool not in self._files:
            raise KeyError(tool)
        if tool not in self._loaded:
            import msgspec

            from srt_planner.flagcheck import FlagCatalog

            decoder = msgspec.json.Decoder(FlagCatalog)
            table: dict[str, FlagCatalog] = {}
            for path in self._files[tool]:
                catalog = decoder.decode(gzip.decompress(path.read_bytes()))
                table[catalog.version] = catalog
            self._loaded[tool] = table
        return self._loaded[tool]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


@cache
def load_catalogs() -> Mapping[str, Mapping[str, FlagCatalog]]:
    """Every shipped catalog (``srt_planner/flag_catalogs``), each tool read when first asked."""
    import srt_planner

    return _Catalogs(Path(srt_planner.__file__).parent / "flag_catalogs")


def findings_of(
    planned: PlannedJob,
    cluster: ClusterConfig,
    *,
    host: Installed | None = None,
    images: Mapping[str, Installed] | None = None,
) -> list[FlagFinding]:
    """The check of one planned job. ``host`` / ``images``: versions preflight probed where the
    job runs (else this interpreter's, for a job that runs it)."""
    from srt_planner.flagcheck import check_plan

    return check_plan(
        planned.plan,
        planned.job.recipe,
        cluster,
        load_catalogs(),
        host=host if host is not None else host_versions(cluster),
        images=images,
    )


def enforce(planned: PlannedJob, cluster: ClusterConfig) -> None:
    """Warnings to stderr; any error stops the command (exit 2) with every finding listed."""
    findings = findings_of(planned, cluster)
    label = planned.job.label
    errors = [f for f in findings if f.severity == "error"]
    for finding in findings:
        if finding.severity == "warning":
            click.echo(f"warning: {label}: {finding.path}: {finding.message}", err=True)
    if not errors:
        return
    lines = [f"{label}: {f.path}: {f.message}" for f in errors]
    noun = "flag" if len(errors) == 1 else "flags"
    raise InvalidRecipeError(
        f"{label}: {len(errors)} engine/router {noun} the program will refuse "
        "(--skip-flag-check goes on anyway)\n" + "\n".join(lines),
        issues=tuple({"file": label, "path": f.path, "message": f.message} for f in errors),
    )

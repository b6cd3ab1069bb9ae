"""The flag check over the public corpus (issue 30 item 4; docs/flag-check.md).

Every schema-2 corpus recipe and every v1 recipe migrated with ``srt_schema.migrate`` is loaded,
planned on simulated nodes (cluster: account + partition only, container runtime pyxis, no
aliases: an alias such as ``sglang`` stays an unresolved image) and checked. Prints recipes
checked, recipes with findings, each finding with its class, and the check's time per recipe
(the catalogs are read once, before the clock starts; their read time is printed apart).

Classes: ``true error`` (a flag no catalogued version of the program knows, or a value outside
its declared choices / of the wrong kind, in a recipe whose version is resolved), ``other
version`` (the flag exists in another catalogued version than the one checked), ``catalog
gap?`` (an unknown flag of a fork or of a program whose version is unresolved: the catalog may
simply not have it), ``unresolved`` (warnings that the version is not known).

    uv run python benchmarks/flag_check_corpus.py [--corpus DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import Counter
from pathlib import Path

from srt_cli.flagcheck import host_versions, load_catalogs
from srt_planner import plan_allocation, plan_job
from srt_planner.flagcheck import FlagFinding, check_plan
from srt_planner.plan import StandIn
from srt_schema.cluster import ClusterConfig
from srt_schema.load import load_recipe_text
from srt_schema.migrate import migrate_text

REPO = Path(__file__).resolve().parents[1]
CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")


def _corpus(arg: str | None) -> Path:
    return Path(arg or os.environ.get("SRT_CORPUS", REPO.parent / "shared" / "corpus"))


def _texts(root: Path) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted((root / "v2").rglob("*.yaml")):
        out.append((str(path.relative_to(root)), path.read_text()))
    for path in sorted((root / "v1").rglob("*.yaml")):
        try:
            migrated = migrate_text(path.read_text(), file=str(path)).text
        except Exception:  # a file migrate refuses is not this benchmark's
            continue
        out.append((str(path.relative_to(root)) + " (migrated)", migrated))
    return out


def classify(finding: FlagFinding) -> str:
    if finding.severity == "warning":
        return (
            "unresolved"
            if finding.kind in {"version-unresolved", "no-catalog"}
            else "other version (warning)"
        )
    if finding.kind == "other-version":
        return "other version"
    if not finding.resolved:
        return "catalog gap?"
    return "true error"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="corpus folder (default $SRT_CORPUS or ../shared/corpus)")
    parser.add_argument("--verbose", action="store_true", help="print every warning too")
    parser.add_argument(
        "--stand-in",
        action="store_true",
        help="as the corpus-run tier plans: local launcher, container runtime none, stand-in "
        "engines, this host's Dynamo and routers",
    )
    args = parser.parse_args()
    cluster = CLUSTER
    stand_in = None
    if args.stand_in:
        cluster = ClusterConfig(
            default_account="acct",
            default_partition="batch",
            container_runtime="none",
            launcher="local",
        )
        stand_in = StandIn(model="/tmp/stand-in-model")
    host = host_versions(cluster)
    versions = host.versions if host is not None else {}
    print(f"mode: {'stand-in, host ' + str(versions) if args.stand_in else 'pyxis cluster'}")
    start = time.perf_counter()
    catalogs = load_catalogs()
    read = time.perf_counter() - start
    print(f"catalogs: {sum(len(v) for v in catalogs.values())} read in {read * 1000:.1f} ms")
    checked = with_findings = with_errors = unplannable = jobs_checked = 0
    times: list[float] = []
    classes: Counter[str] = Counter()
    for label, text in _texts(_corpus(args.corpus)):
        try:
            jobs = load_recipe_text(text, file=label, cluster=cluster)
        except Exception:  # refused recipes are the schema tier's
            continue
        recipe_findings: list[FlagFinding] = []
        for job in jobs:
            try:
                request = plan_allocation(job.recipe, cluster, runner_name=None)
                nodes = tuple(f"node-{i:02d}" for i in range(1, request.nodes + 1))
                plan = plan_job(job.recipe, cluster, nodes, "1234", stand_in=stand_in)
            except Exception:  # counted, not this benchmark's
                unplannable += 1
                continue
            t0 = time.perf_counter()
            findings = check_plan(plan, job.recipe, cluster, catalogs, host=host)
            times.append(time.perf_counter() - t0)
            jobs_checked += 1
            recipe_findings += findings
            for finding in findings:
                kind = classify(finding)
                classes[kind] += 1
                if kind != "unresolved" or args.verbose:
                    print(f"  [{kind}] {job.label}: {finding.path}: {finding.message}")
        if not recipe_findings and not times:
            continue
        checked += 1
        with_findings += any(classify(f) != "unresolved" for f in recipe_findings)
        with_errors += any(f.severity == "error" for f in recipe_findings)
    print()
    print(
        "| recipes checked | jobs checked | with findings (beyond unresolved) | with errors "
        "| jobs not plannable |"
    )
    print("|---|---|---|---|---|")
    print(f"| {checked} | {jobs_checked} | {with_findings} | {with_errors} | {unplannable} |")
    print()
    print("| class | findings |")
    print("|---|---|")
    for kind, count in sorted(classes.items()):
        print(f"| {kind} | {count} |")
    if times:
        print()
        print(
            f"check time per job: median {statistics.median(times) * 1000:.2f} ms, "
            f"max {max(times) * 1000:.2f} ms, total {sum(times) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()

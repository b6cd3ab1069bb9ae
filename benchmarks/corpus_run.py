"""Every public recipe, run end to end on this machine with stand-in engines.

The corpus-run tier (``tests/test_corpus_run.py``, marker ``corpus_run``) and this script share
the code below. A case is one job of a corpus file: every schema-valid v2 recipe
(``$SRT_CORPUS/INDEX.md``, default ``../shared/corpus``) and every v1 recipe after ``srtctl
migrate``; a file that yields at most ``MAX_JOBS_PER_FILE`` jobs (override variants or sweep
points) runs each of them, a larger one its first. Each job runs as

    srtctl apply --local --stand-in-engines -f <the job's resolved recipe> --json

with the tier's short benchmark (:func:`tier_document`, the same for every recipe; the rules are
in docs/corpus-run.md), ``HF_ENDPOINT`` at a hub double serving the stand-in model under every
repository id (:func:`hub_url`) and one ``HF_HOME`` under the output base. It passes when the
health gate passed, the benchmark got output tokens at every concurrency, the rollup was
written, the job completed, and no process of it is left. A case that cannot pass is a row of
the exception table in docs/corpus-run.md, with its reason.

    uv run python benchmarks/corpus_run.py [--folder v2|v1] [--match TEXT] [--keep DIR]

prints one line per case (result, wall time, reason), then passed / total per corpus folder and
the five slowest cases.

About 430 lines: the cases, one run, its dataset host, the exception table and the script, kept in
the one file the test loads.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("SRT_CORPUS") or REPO.parent / "shared" / "corpus")
EXCEPTIONS_DOC = REPO / "docs" / "corpus-run.md"
#: A file with at most this many jobs runs every one of them; a larger one its first only.
MAX_JOBS_PER_FILE = 3
#: A job whose stand-in plan has more processes than this runs with its worker counts scaled
#: down (see :func:`capped`): one host cannot start hundreds of Python processes in seconds.
MAX_PROCESSES = 24
#: Wall-clock bound of one job (apply included); past it the run is cancelled and fails.
RUN_TIMEOUT_S = 240.0
#: The environment variable every process of a tier run inherits (to find leftovers).
MARKER = "SRT_CORPUS_RUN_MARKER"
#: The short benchmark (docs/corpus-run.md#the-short-benchmark).
CONCURRENCIES = [2, 4]
SHORT_SA_BENCH: dict[str, Any] = {
    "type": "sa-bench",
    "isl": 64,
    "osl": 16,
    "concurrencies": CONCURRENCIES,
}
SA_BENCH_SETS: dict[str, Any] = {"concurrencies": CONCURRENCIES, "num_prompts_mult": 4}
HEALTH_SETS: dict[str, Any] = {"max_attempts": 90, "interval_seconds": 1}
#: aiperf for mooncake-router (the recipes pin none; the tier runs it through uvx).
AIPERF = "aiperf==0.13.0"
#: The accuracy evals, and the answer length the tier asks of them (the stand-ins write every
#: token asked for; the recipes ask up to 65,536).
EVAL_TYPES = ("gsm8k", "mmlu", "gpqa", "longbenchv2")
EVAL_MAX_TOKENS = 16


@dataclass
class Case:
    folder: str  # "v2" or "v1"
    rel: str  # path below the folder
    index: int  # job index within the file
    label: str  # the job's label (file, variant, sweep point)
    document: dict[str, Any] | None = None
    #: Why the file yields no runnable job (it does not migrate or load), if so.
    load_error: str | None = None

    @property
    def key(self) -> str:
        suffix = f"#{self.index}" if self.index else ""
        return f"{self.folder}/{self.rel}{suffix}"


@dataclass
class Outcome:
    case: Case
    passed: bool
    seconds: float
    reason: str = ""
    job_dir: str | None = None
    details: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- the cases


def _v2_files(corpus: Path) -> list[str]:
    rows = []
    for line in (corpus / "INDEX.md").read_text().splitlines():
        if line.startswith("| v2 |"):
            cols = [c.strip() for c in line.split("|")]
            if cols[10].startswith("yes"):
                rows.append(f"{cols[2]}/{cols[3]}")
    return sorted(rows)


def _v1_files(corpus: Path) -> list[str]:
    root = corpus / "v1"
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.suffix in (".yaml", ".yml")
    )


def stand_in_model(base: Path) -> str:
    """The stand-in model folder srtctl writes under the output base (and loads point at)."""
    from srt_planner.stand_in import STAND_IN_FOLDER

    return str(base / STAND_IN_FOLDER)


#: One hub double per output base, for the process's life (its threads are daemons).
_HUBS: dict[Path, Any] = {}


def hub_url(base: Path) -> str:
    """A Hugging Face hub double on 127.0.0.1 serving the stand-in model under every repository
    id (docs/corpus-run.md#hub-models): an ``hf:`` recipe's benchmark client fetches its
    tokenizer from it with huggingface_hub, as in a real job."""
    if base not in _HUBS:
        from srt_bench.testing import HubServer

        hub = HubServer({}, default=Path(stand_in_model(base)))
        hub.__enter__()
        _HUBS[base] = hub
    url: str = _HUBS[base].url
    return url


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:300]


def file_cases(corpus: Path, folder: str, rel: str, output_base: Path) -> list[Case]:
    """The cases of one corpus file (v1 files are migrated first)."""
    from srt_schema.errors import SchemaError
    from srt_schema.load import load_recipe_text
    from srt_schema.migrate import migrate_text

    path = corpus / folder / rel
    text = path.read_text()
    try:
        if folder == "v1":
            text = migrate_text(text, file=str(path)).text
        jobs = load_recipe_text(text, file=str(path), tokenizer=stand_in_model(output_base))
    except SchemaError as exc:
        return [Case(folder, rel, 0, rel, load_error=_one_line(str(exc)))]
    chosen = jobs if len(jobs) <= MAX_JOBS_PER_FILE else jobs[:1]
    return [
        Case(folder, rel, i, job.label, document=dict(job.document)) for i, job in enumerate(chosen)
    ]


def cases(corpus: Path, output_base: Path, folders: tuple[str, ...] = ("v2", "v1")) -> list[Case]:
    """Every case of the tier, in a stable order."""
    out: list[Case] = []
    for folder in folders:
        files = _v2_files(corpus) if folder == "v2" else _v1_files(corpus)
        for rel in files:
            out += file_cases(corpus, folder, rel, output_base)
    return out


def tier_document(document: dict[str, Any]) -> dict[str, Any]:
    """The job with the tier's short benchmark and health deadline (docs/corpus-run.md)."""
    doc = json.loads(json.dumps(document))
    bench = doc.get("benchmark") or {}
    kind = bench.get("type", "manual")
    if kind == "manual":
        doc["benchmark"] = dict(SHORT_SA_BENCH)
    elif kind == "sa-bench":
        bench.update(SA_BENCH_SETS)
        if bench.get("dataset_name", "random") == "random":
            bench.update({"isl": SHORT_SA_BENCH["isl"], "osl": SHORT_SA_BENCH["osl"]})
        doc["benchmark"] = bench
    elif kind == "mooncake-router":
        bench.setdefault("aiperf_package", AIPERF)
        doc["benchmark"] = bench
    elif kind in EVAL_TYPES:
        bench["max_tokens"] = EVAL_MAX_TOKENS
        doc["benchmark"] = bench
    doc.setdefault("health_check", {}).update(HEALTH_SETS)
    return doc


def _plan(recipe: Path, base: Path, sets: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [*_srtctl(), "dry-run", "--stand-in-engines", "-f", str(recipe), "-o", str(base), "--json",
         *sets],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(_one_line(done.stderr or done.stdout))
    plan: dict[str, Any] = json.loads(done.stdout.splitlines()[0])
    return plan


def capped(doc: dict[str, Any], processes: int) -> tuple[dict[str, Any], str]:
    """Scale roles down so the plan stays near ``MAX_PROCESSES``: a role's ``nodes`` and
    ``workers`` shrink by the same whole factor (their greatest common divisor bounds it), so
    every worker keeps its GPUs and its span of nodes; returns the document and a note."""
    if processes <= MAX_PROCESSES:
        return doc, ""
    factor = MAX_PROCESSES / processes
    notes = []
    for name, role in (doc.get("roles") or {}).items():
        if not isinstance(role, dict):
            continue
        nodes, workers = role.get("nodes"), role.get("workers")
        if not (isinstance(nodes, int) and isinstance(workers, int)) or nodes < 1 or workers < 2:
            continue
        unit = math.gcd(nodes, workers)
        keep = max(1, int(unit * factor))
        if keep < unit:
            role["nodes"], role["workers"] = nodes // unit * keep, workers // unit * keep
            notes.append(
                f"roles.{name} {workers} workers on {nodes} nodes -> "
                f"{role['workers']} on {role['nodes']}"
            )
    return doc, ", ".join(notes)


# --------------------------------------------------------------------------- one run


def _srtctl() -> list[str]:
    return [sys.executable, "-c", "from srt_cli.main import main; main()"]


def marked(marker: str) -> list[int]:
    """Live processes whose environment carries ``MARKER=marker``."""
    from srt_runtime.watchdog import marked_pids

    return marked_pids(marker, variable=MARKER)


def _check_job(job_dir: Path) -> list[str]:
    """What is wrong with a finished job folder (empty: it passed). A ``custom`` benchmark is
    the recipe's own command: it passes by completing (it writes no rollup); a plan with
    frontend ``none`` has no health gate to pass."""
    problems = []
    status = json.loads((job_dir / "status.json").read_text())
    if status.get("status") != "completed":
        problems.append(f"status {status.get('status')} (exit {status.get('exit_code')})")
    plan = json.loads((job_dir / "plan.json").read_text())
    lines = (job_dir / "status_events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    gated = plan["health"]["family"] != "none"
    if gated and not any(e.get("event") == "health" for e in events):
        problems.append("the health gate never passed")
    config = yaml.safe_load((job_dir / "config.yaml").read_text())
    kind = (config.get("benchmark") or {}).get("type")
    if kind == "custom":
        return problems
    if kind in EVAL_TYPES:
        return problems + _eval_problems(job_dir / "logs" / "accuracy", kind)
    rollup_path = job_dir / "logs" / "benchmark-rollup.json"
    if not rollup_path.is_file():
        problems.append("no logs/benchmark-rollup.json")
        return problems
    rollup = json.loads(rollup_path.read_text())
    if "data" in rollup and "runs" not in rollup:  # aiperf's export embedded (mooncake-router)
        data = rollup["data"] or {}
        for key in ("request_count", "output_token_throughput"):
            if not ((data.get(key) or {}).get("avg") or 0) > 0:
                problems.append(f"aiperf's export has no {key}")
        return problems
    runs = rollup.get("runs") or []
    if not runs:
        problems.append("the rollup has no runs")
    for run in runs:
        if not (run.get("total_output_tokens") or 0) > 0:
            problems.append(f"no output tokens at concurrency {run.get('concurrency')}")
    return problems


def _eval_problems(folder: Path, kind: str) -> list[str]:
    """An accuracy eval writes no rollup: its report must show every question answered."""
    reports = sorted(folder.glob(f"{kind}_*.json"))
    if not reports:
        return [f"no {folder.name}/{kind}_<model>.json"]
    report = json.loads(reports[0].read_text())
    if not report.get("attempts") or report.get("failed_requests"):
        return [f"{report.get('failed_requests')} of {report.get('attempts')} requests failed"]
    return []


def _diagnosis(job_dir: Path) -> str:
    """The failure the runtime reported (status.json's message)."""
    try:
        return _one_line(json.loads((job_dir / "status.json").read_text()).get("message", ""))
    except (OSError, ValueError):
        return ""


def run_case(case: Case, base: Path) -> Outcome:
    """Run one case with stand-in engines and check what it left behind."""
    start = time.monotonic()
    if case.document is None:
        return Outcome(case, False, 0.0, f"does not load: {case.load_error}")
    base.mkdir(parents=True, exist_ok=True)
    doc = tier_document(case.document)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=base, delete=False) as handle:
        yaml.safe_dump(doc, handle, sort_keys=False)
        recipe = Path(handle.name)
    note = ""
    try:
        plan = _plan(recipe, base, [])
        doc, note = capped(doc, len(plan["processes"]))
        if note:
            recipe.write_text(yaml.safe_dump(doc, sort_keys=False))
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        return Outcome(case, False, time.monotonic() - start, f"does not plan: {exc}")
    marker = f"{os.getpid()}-{time.monotonic_ns()}"
    # an hf: model's tokenizer comes from the hub double, into one HF_HOME for the tier; the
    # datasets come from the tier's static server (SRT_MOONCAKE_TRACE_URL, SRT_DATASETS_MIRROR)
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_TOKEN")}
    env |= {MARKER: marker, "HF_ENDPOINT": hub_url(base), "HF_HOME": str(base / "hf-home")}
    command = [*_srtctl(), "apply", "--local", "--stand-in-engines", "-f", str(recipe),
               "-o", str(base), "--json"]  # fmt: skip
    try:
        with dataset_host(base) as fetch_env:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                env={**env, **fetch_env},
                timeout=RUN_TIMEOUT_S,
                check=False,
            )
        stdout, stderr = done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        _kill(marker)
        return Outcome(case, False, time.monotonic() - start, f"timed out ({exc.timeout:.0f} s)")
    seconds = time.monotonic() - start
    job_dir = _job_dir(stdout)
    leftovers = _leftovers(marker)
    if job_dir is None:
        tail = _one_line((stderr or stdout)[-600:])
        return Outcome(case, False, seconds, f"no job started: {tail}")
    problems = _check_job(job_dir)
    if leftovers:
        problems.append(f"{len(leftovers)} processes left running")
    if problems:
        reason = "; ".join(problems)
        diagnosis = _diagnosis(job_dir)
        return Outcome(
            case, False, seconds, f"{reason}: {diagnosis}" if diagnosis else reason, str(job_dir)
        )
    return Outcome(case, True, seconds, note, str(job_dir))


@contextlib.contextmanager
def dataset_host(base: Path) -> Iterator[dict[str, str]]:
    """The host datasets are downloaded from, on 127.0.0.1: a static server of a small trace per
    Mooncake workload (``traces/``) and a mirror of the evals' published files; yields the job
    environment that points the trace URL and ``$SRT_DATASETS_MIRROR`` at it and both caches at
    ``<base>/tier-cache`` (docs/corpus-run.md#the-short-benchmark). Nothing reaches the internet."""
    from srt_bench.testing import StaticFileServer, write_eval_mirror, write_tiny_trace
    from srt_schema.registry import MOONCAKE_WORKLOADS

    root = base / "tier-host"
    for workload in MOONCAKE_WORKLOADS:
        write_tiny_trace(root / "traces" / f"{workload}_trace.jsonl")
    write_eval_mirror(root)
    with StaticFileServer(root) as server:
        yield {
            "SRT_MOONCAKE_TRACE_URL": f"{server.url}/traces/{{workload}}_trace.jsonl",
            "SRT_DATASETS_MIRROR": server.url,
            "SRT_DATASETS_CACHE": str(base / "tier-cache"),
            "HF_DATASETS_CACHE": str(base / "tier-cache"),
        }


def _job_dir(stdout: str) -> Path | None:
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        if record.get("output_dir"):
            return Path(record["output_dir"])
    return None


def _leftovers(marker: str) -> list[int]:
    deadline = time.monotonic() + 5.0
    while True:
        found = marked(marker)
        if not found or time.monotonic() > deadline:
            if found:
                _kill(marker)
            return found
        time.sleep(0.1)


def _kill(marker: str) -> None:
    import signal

    for pid in marked(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# --------------------------------------------------------------------------- the exception table


_ROW = re.compile(r"^\| `(?P<key>[^`]+)` \| (?P<reason>.+?) \|\s*$")


def exceptions(doc: Path = EXCEPTIONS_DOC) -> dict[str, str]:
    """``case key -> reason`` from the exception table of docs/corpus-run.md."""
    table: dict[str, str] = {}
    inside = False
    for line in doc.read_text().splitlines():
        if line.startswith("## "):
            inside = line.strip() == "## Exceptions"
            continue
        match = _ROW.match(line) if inside else None
        if match:
            table[match["key"]] = match["reason"].strip()
    return table


# --------------------------------------------------------------------------- the script


def _summary(outcomes: list[Outcome]) -> Iterator[str]:
    for folder in ("v2", "v1"):
        mine = [o for o in outcomes if o.case.folder == folder]
        if not mine:
            continue
        files: dict[str, bool] = {}
        for o in mine:
            files[o.case.rel] = files.get(o.case.rel, True) and o.passed
        yield (
            f"{folder}: {sum(o.passed for o in mine)} / {len(mine)} jobs passed; "
            f"{sum(files.values())} / {len(files)} files"
        )
    slowest = sorted(outcomes, key=lambda o: o.seconds, reverse=True)[:5]
    yield "slowest: " + ", ".join(f"{o.case.key} {o.seconds:.1f} s" for o in slowest)
    yield f"wall time: {sum(o.seconds for o in outcomes):.0f} s over {len(outcomes)} jobs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", choices=("v2", "v1"), action="append")
    parser.add_argument("--match", default="", help="only cases whose key contains TEXT")
    parser.add_argument("--keep", type=Path, help="output base to keep (default: a temp folder)")
    args = parser.parse_args(argv)
    folders = tuple(args.folder or ("v2", "v1"))
    base = args.keep or Path(tempfile.mkdtemp(prefix="srt-corpus-run-"))
    table = exceptions()
    outcomes = []
    for case in cases(CORPUS, base, folders):
        if args.match not in case.key:
            continue
        outcome = run_case(case, base)
        outcomes.append(outcome)
        mark = "pass" if outcome.passed else ("FAIL (listed)" if case.key in table else "FAIL")
        print(f"{mark:14} {outcome.seconds:6.1f} s  {case.key}  {outcome.reason}", flush=True)
    for line in _summary(outcomes):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

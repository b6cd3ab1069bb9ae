"""Every external benchmark runner, run for real: `srtctl apply --local` of the quickstart (two
Dynamo mocker workers behind the real Dynamo frontend, ai-dynamo from PyPI) with the benchmark
type swapped, the client being the real program from PyPI (.ci/install-bench-clients.sh):
aiperf 0.13 through `benchmark.aiperf_package` (uvx), lm-eval's local-completions model, SGLang's
`bench_serving`; and the accuracy evals finding or fetching their datasets with the job's own
loading code (a loopback mirror, the offline folder, the cache folder, the hub's cache layout).
Nothing leaves this machine: the files are made here, in their published forms.

Jobs bind the quickstart's fixed ports: run under `flock /tmp/srt-jobs.lock`.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from tokenizers import Tokenizer

from srt_bench.testing.tiny_model import write_tiny_model

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"
CLIENTS = Path(os.environ.get("SRT_BENCH_CLIENTS", "/opt/srt-bench-clients"))
AIPERF = "aiperf==0.13.0"
REQUIRED = os.environ.get("CI", "").lower() in ("1", "true", "yes")

pytestmark = pytest.mark.slow


def _client(name: str) -> Path:
    """The client's virtual environment; a missing one skips with one line (fails in CI)."""
    folder = CLIENTS / name
    if not (folder / ".srt-spec").is_file():
        message = (
            f"runner tier: {name} is not installed under {CLIENTS}; install it with "
            "`bash .ci/install-bench-clients.sh` (required when CI=true)"
        )
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return folder


def _uvx() -> None:
    if shutil.which("uvx") is None:
        (pytest.fail if REQUIRED else pytest.skip)("runner tier: uvx is not on PATH")


def _apply(out: Path, *sets: str, env: dict[str, str] | None = None) -> Path:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    argv = [srtctl, "apply", "--local", "-f", str(QUICKSTART), "-o", str(out)]
    for key in ("benchmark.isl", "benchmark.osl"):
        if not any(item.startswith(f"{key}=") for item in sets):
            argv += ["--unset", key]  # the quickstart's lengths, which most types do not read
    for item in sets:
        argv += ["--unset", item[1:]] if item.startswith("-") else ["--set", item]
    done = subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=420,
        check=False,
        env={**os.environ, **(env or {})},
    )
    assert out.is_dir(), done.stdout[-2000:] + done.stderr[-2000:]
    [job_dir] = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
    bench = job_dir / "logs" / "benchmark.out"
    tail = bench.read_text(errors="replace")[-4000:] if bench.exists() else ""
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:] + tail
    return job_dir / "logs"


def _trace(path: Path) -> list[dict[str, Any]]:
    # fewer than 10 rows with hash_ids: aiperf 0.13 decodes >= 10 in worker processes that
    # load a local tokenizer folder as a hub id and fail (docs/telemetry-and-bench.md)
    rows = [
        {"timestamp": 40 * i, "input_length": 40 + 8 * (i % 3), "output_length": 6 + i % 2,
         "hash_ids": [1 + i % 3]}
        for i in range(8)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def test_trace_replay_runs_aiperf_per_level_into_the_rollup(tmp_path: Path) -> None:
    _uvx()
    rows = _trace(tmp_path / "trace.jsonl")
    logs = _apply(
        tmp_path / "out",
        "benchmark.type=trace-replay",
        f"benchmark.trace_file={tmp_path / 'trace.jsonl'}",
        f"benchmark.aiperf_package={AIPERF}",
        "benchmark.concurrencies=[2]",
    )
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    assert rollup["benchmark_type"] == "trace-replay"
    (run,) = rollup["runs"]
    assert run["concurrency"] == 2
    assert run["completed_requests"] == len(rows)
    # the trace's lengths, as aiperf counted them with the model's tokenizer
    assert run["total_input_tokens"] == sum(r["input_length"] for r in rows)
    assert run["total_output_tokens"] == sum(r["output_length"] for r in rows)
    for key in ("throughput_toks", "request_throughput", "ttft_p99_ms", "itl_mean_ms"):
        assert run[key] > 0, key
    assert (logs / "artifacts" / "warmup").is_dir()
    assert len((logs / "benchmark-rollup.csv").read_text().splitlines()) == 2  # header + level


def test_mooncake_router_replays_the_trace_and_embeds_aiperfs_export(tmp_path: Path) -> None:
    _uvx()
    rows = _trace(tmp_path / "trace.jsonl")
    logs = _apply(
        tmp_path / "out",
        "benchmark.type=mooncake-router",
        f"benchmark.dataset_path={tmp_path / 'trace.jsonl'}",
        f"benchmark.aiperf_package={AIPERF}",
        "-benchmark.concurrencies",
    )
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    assert rollup["benchmark_type"] == "mooncake-router"
    assert rollup["config"] == {"model": "tiny-word", "isl": None, "osl": None,
                                "workload": "conversation"}  # fmt: skip
    data = rollup["data"]
    assert data["request_count"]["avg"] == len(rows)
    # the prompt tokens aiperf sent are the ones the server reports in its usage
    assert data["total_isl"]["avg"] == sum(r["input_length"] for r in rows)
    assert data["total_usage_prompt_tokens"]["avg"] == data["total_isl"]["avg"]
    assert data["output_token_throughput"]["avg"] > 0


def test_lm_eval_runs_a_local_task_through_local_completions(tmp_path: Path) -> None:
    venv = _client("lm-eval")
    rows = [
        {"question": f"What is {n} plus {n}?", "answer": f"{n}+{n}={2 * n}\n#### {2 * n}"}
        for n in (1, 2, 3)
    ]
    (tmp_path / "arith.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "srt_arith.yaml").write_text(
        "task: srt_arith\n"
        "dataset_path: json\n"
        f"dataset_kwargs: {{data_files: {{test: {tmp_path / 'arith.jsonl'}}}}}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        'doc_to_text: "Question: {{question}}\\nAnswer:"\n'
        "doc_to_target: \"{{answer.split('####')[-1].strip()}}\"\n"
        "generation_kwargs: {until: ['\\n\\n'], max_gen_toks: 8}\n"
        "metric_list: [{metric: exact_match, aggregation: mean, higher_is_better: true}]\n"
    )
    logs = _apply(
        tmp_path / "out",
        "benchmark.type=lm-eval",
        "-benchmark.concurrencies",
        "environment.LM_EVAL_TASKS=srt_arith",
        f"environment.LM_EVAL_INCLUDE_PATH={tasks}",
        "environment.EVAL_CONC='4'",
        "environment.HF_DATASETS_OFFLINE='1'",
        env={"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"},
    )
    [results] = sorted((logs / "eval_results").rglob("results_*.json"))
    doc = json.loads(results.read_text())
    assert "exact_match,none" in doc["results"]["srt_arith"]
    assert doc["config"]["model"] == "local-completions"
    [samples] = sorted((logs / "eval_results").rglob("samples_srt_arith_*.jsonl"))
    assert len(samples.read_text().splitlines()) == len(rows)


def _sharegpt_hub_cache(hub: Path) -> None:
    """SGLang's `random` dataset draws its token ids from ShareGPT (a hub file): a tiny one in
    the hub's cache layout, read offline."""
    repo = hub / "datasets--anon8231489123--ShareGPT_Vicuna_unfiltered"
    revision = "0" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "and", "far"]
    conversations = [
        {"id": str(i), "conversations": [
            {"from": "human", "value": " ".join(words[(i + j) % len(words)] for j in range(40))},
            {"from": "gpt", "value": " ".join(words)},
        ]}
        for i in range(160)  # it samples one prompt per conversation: 128 need 128
    ]  # fmt: skip
    (snapshot / "ShareGPT_V3_unfiltered_cleaned_split.json").write_text(json.dumps(conversations))


def test_sglang_bench_serving_runs_per_level_into_the_rollup(tmp_path: Path) -> None:
    venv = _client("sglang")
    _sharegpt_hub_cache(tmp_path / "hub")
    logs = _apply(
        tmp_path / "out",
        "benchmark.type=sglang-bench",
        "benchmark.isl=16",
        "benchmark.osl=8",
        "benchmark.concurrencies=[4]",
        f"environment.SRT_SGLANG_PYTHON={venv / 'bin' / 'python'}",
        f"environment.HF_HUB_CACHE={tmp_path / 'hub'}",
        "environment.HF_HUB_OFFLINE='1'",
    )
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    assert rollup["benchmark_type"] == "sglang-bench"
    assert rollup["config"] == {"model": "tiny-word", "isl": 16, "osl": 8}
    (run,) = rollup["runs"]
    assert run["concurrency"] == 4
    assert run["completed_requests"] == 128  # the reference's prompts per level
    assert run["total_output_tokens"] == 8 * 128  # range ratio 1: exactly osl each
    for key in ("throughput_toks", "ttft_p99_ms", "tpot_mean_ms", "e2el_mean_ms"):
        assert run[key] > 0, key


# --- accuracy evals: the datasets in their published forms, found or fetched by the job -----


def _gsm8k_rows() -> list[dict[str, str]]:
    return [
        {"question": f"Tom has {n} apples and buys {n} more. How many now?",
         "answer": f"{n} + {n} = {2 * n}\n#### {2 * n}"}
        for n in range(1, 5)
    ]  # fmt: skip


class _Mirror:
    """A loopback HTTP server holding `<host>/<path>` files (`$SRT_DATASETS_MIRROR`)."""

    def __init__(self, root: Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Mirror:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    requested: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        _QuietHandler.requested.append(self.path)


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[_Mirror]:
    root = tmp_path / "mirror"
    gsm = root / "raw.githubusercontent.com/openai/grade-school-math/master/grade_school_math/data"
    gsm.mkdir(parents=True)
    (gsm / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _gsm8k_rows()))
    with _Mirror(root) as m:
        yield m


def _report(logs: Path, name: str) -> dict[str, Any]:
    return json.loads((logs / "accuracy" / f"{name}_tiny-word.json").read_text())


def _eval_sets(name: str) -> tuple[str, ...]:
    return (f"benchmark.type={name}", "-benchmark.concurrencies", "benchmark.num_threads=4")


def test_gsm8k_fetches_its_dataset_into_the_cache_folder(tmp_path: Path, mirror: _Mirror) -> None:
    cache = tmp_path / "cache"
    logs = _apply(
        tmp_path / "out",
        *_eval_sets("gsm8k"),
        "benchmark.num_shots=1",
        "benchmark.num_examples=3",
        "benchmark.max_tokens=8",
        f"environment.SRT_DATASETS_MIRROR={mirror.url}",
        f"environment.HF_DATASETS_CACHE={cache}",
    )
    fetched = cache / "srt-evals" / "gsm8k" / "test.jsonl"
    assert fetched.read_text().splitlines()[0] == json.dumps(_gsm8k_rows()[0])
    report = _report(logs, "gsm8k")
    assert (report["num_examples"], report["attempts"], report["failed_requests"]) == (3, 3, 0)
    assert f"questions from {fetched}" in (logs / "benchmark.out").read_text()
    gsm = "/raw.githubusercontent.com/openai/grade-school-math/master/grade_school_math/data"
    assert f"{gsm}/test.jsonl" in " ".join(_QuietHandler.requested)
    # the file used, with its sha256, is in the lock (srt_bench.fetch)
    lock = yaml.safe_load((logs.parent / "recipe.lock.yaml").read_text())["lock"]
    [entry] = lock["datasets"]
    assert (entry["eval"], entry["origin"], entry["path"]) == ("gsm8k", "downloaded", str(fetched))
    assert entry["sha256"] == hashlib.sha256(fetched.read_bytes()).hexdigest()


def _mmlu_csv(path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["", "Question", "A", "B", "C", "D", "Answer", "Subject"])
        for i in range(4):
            w.writerow([i, f"Which is number {i}?", "zero", "one", "two", "three", "ABCD"[i],
                        "counting" if i % 2 else "naming"])  # fmt: skip


def test_mmlu_reads_the_offline_folder_under_hf_datasets_offline(tmp_path: Path) -> None:
    folder = tmp_path / "datasets"
    folder.mkdir()
    _mmlu_csv(folder / "mmlu.csv")
    logs = _apply(
        tmp_path / "out",
        *_eval_sets("mmlu"),
        "benchmark.repeat=2",
        "benchmark.max_tokens=8",
        f"environment.SRT_DATASETS_DIR={folder}",
        "environment.HF_DATASETS_OFFLINE='1'",
    )
    report = _report(logs, "mmlu")
    assert (report["num_examples"], report["attempts"], report["failed_requests"]) == (4, 8, 0)
    assert sorted(report["per_category"]) == ["counting", "naming"]


def test_gpqa_reads_the_cache_folder_offline(tmp_path: Path) -> None:
    cache = tmp_path / "hf" / "datasets"
    (cache / "srt-evals" / "gpqa").mkdir(parents=True)
    with (cache / "srt-evals" / "gpqa" / "gpqa_diamond.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2",
                    "Incorrect Answer 3", "Subdomain"])  # fmt: skip
        for i in range(3):
            w.writerow([f"Which gas is {i}?", "right", "wrong a", "wrong b", "wrong c", "Physics"])
    logs = _apply(
        tmp_path / "out",
        *_eval_sets("gpqa"),
        "benchmark.repeat=1",
        "benchmark.max_tokens=8",
        f"environment.HF_HOME={tmp_path / 'hf'}",
        "environment.HF_HUB_OFFLINE='1'",
    )
    report = _report(logs, "gpqa")
    assert (report["num_examples"], report["attempts"], report["failed_requests"]) == (3, 3, 0)


def test_longbench_v2_reads_the_hubs_cache_layout_offline(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    snapshot = hub / "datasets--THUDM--LongBench-v2" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    rows = [
        {"_id": str(i), "domain": "Single-Document QA" if i else "Code", "question": "Which?",
         "context": "alpha beta gamma " * 10, "choice_A": "alpha", "choice_B": "beta",
         "choice_C": "gamma", "choice_D": "delta", "answer": "A"}
        for i in range(3)
    ]  # fmt: skip
    (snapshot / "data.json").write_text(json.dumps(rows))
    logs = _apply(
        tmp_path / "out",
        *_eval_sets("longbenchv2"),
        "benchmark.categories=['Single-Document QA']",
        "benchmark.max_tokens=8",
        f"environment.HF_HUB_CACHE={hub}",
        f"environment.HF_DATASETS_CACHE={tmp_path / 'empty'}",
        "environment.HF_DATASETS_OFFLINE='1'",
    )
    report = _report(logs, "longbenchv2")
    assert (report["num_examples"], report["attempts"]) == (2, 2)
    assert report["per_category"].keys() == {"Single-Document QA"}


# --- router: aiperf's prefix-ratio sweep behind the real sglang-router -------------------------


ROUTER_RECIPE = ROOT / "tests" / "recipes" / "sglang-agg-sglang-router.yaml"


def _shared_length(group: list[list[int]]) -> int:
    """How many leading token ids every sequence of the group has in common."""
    n = 0
    while all(len(one) > n and one[n] == group[0][n] for one in group):
        n += 1
    return n


def test_router_sweeps_prefix_ratios_behind_the_sglang_router(tmp_path: Path) -> None:
    """Two SGLang stand-in workers behind the real sglang-router; aiperf 0.13 (uvx) once per
    prefix ratio. A byte-level tokenizer keeps aiperf's corpus text, so the prompts it sent show
    the shared prefixes: per ratio, at most 20 distinct heads of `isl x ratio` tokens over 40
    requests, and every pair with one head shares that many tokens."""
    _uvx()
    model = write_tiny_model(tmp_path / "bpe", kind="byte-bpe")
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    sets = {
        "model.path": str(model),
        "benchmark.type": "router",
        "benchmark.isl": "100",
        "benchmark.osl": "8",
        "benchmark.num_requests": "40",
        "benchmark.concurrency": "8",
        "benchmark.prefix_ratios": "0.2 0.8",
        "benchmark.aiperf_package": AIPERF,
        "benchmark.aiperf_args.warmup-request-count": "2",
        "health_check.interval_seconds": "1",
    }
    argv = [srtctl, "apply", "--local", "--stand-in-engines", "-f", str(ROUTER_RECIPE)]
    argv += ["-o", str(tmp_path / "out"), "--unset", "benchmark.concurrencies"]
    for key, value in sets.items():
        argv += ["--set", f"{key}={value}"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=420, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in (tmp_path / "out").iterdir() if p.name.startswith("local-")]
    logs = job_dir / "logs"

    summary = json.loads((logs / "router-bench" / "results_summary.json").read_text())
    assert summary["prefix_ratios"] == [0.2, 0.8]
    assert len(summary["ttft_values"]) == len(summary["throughput_values"]) == 2
    assert all(v > 0 for v in summary["ttft_values"] + summary["throughput_values"])
    assert summary["config"]["requests"] == 40 and summary["config"]["concurrency"] == 8
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    assert rollup["benchmark_type"] == "router" and rollup["data"] == summary
    assert rollup["validity"]["verdict"] == "valid", rollup["validity"]

    tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
    for seed, (ratio, prefix) in enumerate(((0.2, 20), (0.8, 80))):
        folder = logs / "router-bench" / f"prefix_ratio_{ratio}_seed_{seed}"
        export = json.loads((folder / "profile_export_aiperf.json").read_text())
        assert export["request_count"]["avg"] == 40
        [dataset] = export["input_config"]["datasets"]
        assert (dataset["random_seed"], dataset["prefix_prompts"]) == (
            seed,
            {"pool_size": 20, "length": prefix},
        )
        assert dataset["prompts"]["isl"]["mean"] == 100 - prefix
        # aiperf_args reach every run: a 2-request warmup before the 40 measured
        phases = {p["name"]: p for p in export["input_config"]["phases"]}
        assert (phases["warmup"]["requests"], phases["profiling"]["requests"]) == (2, 40)
        sent = json.loads((folder / "inputs.json").read_text())["data"]
        prompts = [p["messages"][0]["content"] for s in sent for p in s["payloads"]]
        assert len(prompts) == len(set(prompts)) == 40  # each has a part of its own
        ids = [tokenizer.encode(p).ids for p in prompts]
        # a token may merge across the prefix's end: compare all but the last two
        heads: dict[tuple[int, ...], list[list[int]]] = {}
        for one in ids:
            heads.setdefault(tuple(one[: prefix - 2]), []).append(one)
        assert 2 <= len(heads) <= 20, (ratio, len(heads))  # drawn from a pool of 20
        shared = [group for group in heads.values() if len(group) > 1]
        assert shared, f"no two of 40 requests drew one of the 20 prefixes at {ratio}"
        for group in shared:
            common = _shared_length(group)
            assert prefix - 2 <= common < min(map(len, group)), (ratio, common)

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from srt_bench.config import BenchRunConfig, decode_run_config
from srt_bench.errors import BenchConfigError, BenchError
from srt_bench.execute import run_plan
from srt_bench.plans import Command, CommandPlan, EvalPlan, ManualPlan, SaBenchPlan
from srt_bench.runners import REGISTRY, BuildContext, build_plan, registered_types
from srt_schema.rollup import RollupConfig


def _config(frontend_type: str | None = None, **bench: Any) -> BenchRunConfig:
    doc = {
        "benchmark": bench,
        "endpoint": "http://10.0.0.1:8000/",
        "model_name": "org/model",
        "tokenizer_path": "/models/m",
        "total_gpus": 8,
        "frontend_type": frontend_type,
    }
    return decode_run_config(msgspec.json.encode(doc))


CTX = BuildContext(out_dir=Path("/logs"), environ={}, stamp="20260821_120000")


def test_every_schema_type_is_registered() -> None:
    assert registered_types() == (
        "agentperf", "custom", "gpqa", "gsm8k", "lm-eval", "longbenchv2", "manual", "mmlu",
        "mooncake-router", "router", "sa-bench", "sglang-bench", "trace-replay",
    )  # fmt: skip
    assert set(REGISTRY) == set(registered_types())


def test_unknown_type_lists_the_registered_ones() -> None:
    with pytest.raises(BenchConfigError) as err:
        build_plan(_config(type="nope"), CTX)
    assert str(err.value) == (
        "$.benchmark.type: unknown benchmark type 'nope'; registered: "
        + ", ".join(registered_types())
    )


def test_plan_kinds() -> None:
    assert isinstance(build_plan(_config(), CTX), ManualPlan)
    sa = build_plan(_config(type="sa-bench", isl=8, osl=4, concurrencies="1x2"), CTX)
    assert isinstance(sa, SaBenchPlan) and sa.settings.concurrencies == (1, 2)
    ev = build_plan(_config(type="gsm8k", dataset_path="/d/g.jsonl"), CTX)
    assert isinstance(ev, EvalPlan) and (ev.num_shots, ev.num_examples, ev.max_tokens) == (
        5,
        1319,
        256,
    )


def test_sa_bench_settings_errors() -> None:
    with pytest.raises(BenchConfigError, match="sa-bench needs isl and osl"):
        build_plan(_config(type="sa-bench", concurrencies=[1]), CTX)
    with pytest.raises(BenchConfigError, match="sa-bench needs at least one concurrency"):
        build_plan(_config(type="sa-bench", isl=1, osl=1), CTX)
    with pytest.raises(BenchConfigError, match="dataset_name 'custom' needs a dataset_path"):
        build_plan(_config(type="sa-bench", dataset_name="custom", concurrencies=[1]), CTX)


def test_slow_down_only_behind_the_sglang_router() -> None:
    bench = {"type": "sa-bench", "isl": 1, "osl": 1, "concurrencies": [1],
             "slow_down_sleep_time": 1.0, "slow_down_wait_time": 60.0}  # fmt: skip
    plan = build_plan(_config("dynamo", **bench), CTX)
    assert isinstance(plan, SaBenchPlan)
    assert plan.settings.slow_down is None
    assert plan.settings.slow_down_ignored == (
        "slow_down ignored: it needs frontend.type 'sglang-router', got 'dynamo'"
    )


def test_custom_is_bash_lc_verbatim_with_env() -> None:
    plan = build_plan(_config(type="custom", command="echo {nginx_url}", env={"A": "1"}), CTX)
    assert plan == CommandPlan(
        benchmark_type="custom",
        commands=(Command(argv=("bash", "-lc", "echo {nginx_url}"), env={"A": "1"}, cwd="/logs"),),
    )
    with pytest.raises(
        BenchConfigError, match=r"\$\.benchmark\.command: benchmark type 'custom' needs command"
    ):
        build_plan(_config(type="custom"), CTX)


def test_sglang_bench_one_command_per_concurrency() -> None:
    plan = build_plan(_config(type="sglang-bench", isl=1024, osl=128, concurrencies=[4, 8]), CTX)
    assert isinstance(plan, CommandPlan)
    assert [c.argv[c.argv.index("--max-concurrency") + 1] for c in plan.commands] == ["4", "8"]
    argv = plan.commands[0].argv
    assert argv[:5] == ("python", "-m", "sglang.bench_serving", "--backend", "sglang-oai")
    assert argv[argv.index("--base-url") + 1] == "http://10.0.0.1:8000"
    assert argv[argv.index("--num-prompts") + 1] == "128"
    assert argv[argv.index("--random-range-ratio") + 1] == "1"
    assert argv[argv.index("--request-rate") + 1] == "inf"


def test_trace_replay_warmup_then_one_aiperf_run_per_level() -> None:
    plan = build_plan(
        _config(type="trace-replay", trace_file="/t.jsonl", concurrencies="2x4",
                aiperf_args={"benchmark-duration": 600, "verbose": True, "no-x": False},
                ttft_threshold_ms=1000),
        CTX,
    )  # fmt: skip
    assert isinstance(plan, CommandPlan)
    assert plan.fold == "aiperf-per-concurrency"
    warm, c2, c4 = plan.commands
    assert warm.argv[warm.argv.index("--request-count") + 1] == "5"
    assert warm.argv[warm.argv.index("--artifact-dir") + 1] == "/logs/artifacts/warmup"
    assert (
        c2.argv[c2.argv.index("--artifact-dir") + 1]
        == "/logs/artifacts/org_model_trace_c2_20260821_120000"
    )
    assert (
        c4.argv[c4.argv.index("--goodput") + 1] == "time_to_first_token:1000 inter_token_latency:25"
    )
    assert c4.argv[-3:] == ("--benchmark-duration", "600", "--verbose")
    assert c4.argv[:2] == ("aiperf", "profile")
    assert plan.artifacts == {
        2: "/logs/artifacts/org_model_trace_c2_20260821_120000",
        4: "/logs/artifacts/org_model_trace_c4_20260821_120000",
    }


def test_mooncake_router_needs_a_local_trace_and_honours_aiperf_package() -> None:
    with pytest.raises(BenchConfigError, match="srtctl plans the download of the published trace"):
        build_plan(_config(type="mooncake-router"), CTX)
    with pytest.raises(BenchConfigError, match="'web' is not one of 'mooncake', 'conversation'"):
        build_plan(_config(type="mooncake-router", mooncake_workload="web"), CTX)
    plan = build_plan(
        _config(type="mooncake-router", dataset_path="/d/c.jsonl", aiperf_package="aiperf==0.13.0"),
        CTX,
    )
    assert isinstance(plan, CommandPlan)
    argv = plan.commands[0].argv
    assert argv[:5] == ("uvx", "--from", "aiperf==0.13.0", "aiperf", "profile")
    assert "--fixed-schedule" in argv and argv[argv.index("--input-file") + 1] == "/d/c.jsonl"
    assert plan.rollup_config == RollupConfig(
        model="org/model", isl=None, osl=None, workload="conversation"
    )


def test_router_needs_the_sglang_router_frontend() -> None:
    with pytest.raises(
        BenchConfigError, match=r"'router' needs frontend\.type 'sglang-router', got 'dynamo'"
    ):
        build_plan(_config("dynamo", type="router"), CTX)
    with pytest.raises(BenchConfigError, match=r"prefix_ratios: 1 is outside \[0, 1\)"):
        build_plan(_config("sglang-router", type="router", prefix_ratios=[0.5, 1.0]), CTX)


def _flags(argv: tuple[str, ...]) -> dict[str, str]:
    return {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a.startswith("--")}


def test_router_runs_aiperf_once_per_prefix_ratio_with_its_own_seed() -> None:
    plan = build_plan(
        _config(
            "sglang-router", type="router", prefix_ratios="0.2 0.75", isl=1000, osl=40,
            aiperf_package="aiperf==0.13.0", aiperf_args={"warmup-request-count": 3},
        ),
        CTX,
    )  # fmt: skip
    assert isinstance(plan, CommandPlan) and plan.fold == "router-prefix-ratios"
    assert len(plan.commands) == 2
    got = [_flags(c.argv) for c in plan.commands]
    for command in plan.commands:
        assert command.argv[:5] == ("uvx", "--from", "aiperf==0.13.0", "aiperf", "profile")
    # 0.2: a prefix of 200 tokens (from a pool of 20) and 800 of its own, seed 0; 0.75: 750
    # and 250, seed 1
    assert [(f["--prefix-prompt-length"], f["--isl"], f["--isl-stddev"]) for f in got] == [
        ("200", "800", "200"),
        ("750", "250", "62"),
    ]
    assert [f["--random-seed"] for f in got] == ["0", "1"]
    assert {f["--num-prefix-prompts"] for f in got} == {"20"}
    assert {(f["--osl"], f["--osl-stddev"]) for f in got} == {("40", "10")}
    assert {
        (f["--request-count"], f["--num-dataset-entries"], f["--concurrency"]) for f in got
    } == {("200", "200", "20")}
    assert {f["--warmup-request-count"] for f in got} == {"3"}  # aiperf_args, on every run
    assert [f["--artifact-dir"] for f in got] == [
        "/logs/router-bench/prefix_ratio_0.2_seed_0",
        "/logs/router-bench/prefix_ratio_0.75_seed_1",
    ]
    assert got[0]["--url"] == "http://10.0.0.1:8000" and got[0]["--tokenizer"] == "/models/m"
    # unset: the five default ratios and `aiperf` from PATH
    default = build_plan(_config("sglang-router", type="router"), CTX)
    assert isinstance(default, CommandPlan) and len(default.commands) == 5
    assert default.commands[0].argv[:2] == ("aiperf", "profile")
    assert _flags(default.commands[4].argv)["--prefix-prompt-length"] == str(int(14000 * 0.9))


def _aiperf_export(folder: Path, ttft: float, throughput: float) -> None:
    folder.mkdir(parents=True)
    doc = {
        "time_to_first_token": {"unit": "ms", "avg": ttft, "p99": ttft * 2},
        "output_token_throughput": {"unit": "tokens/sec", "avg": throughput},
    }
    (folder / "profile_export_aiperf.json").write_text(json.dumps(doc))


def test_router_summary_keeps_the_ratios_that_finished(tmp_path: Path) -> None:
    config = _config("sglang-router", type="router", prefix_ratios=[0.1, 0.5, 0.9], isl=100)
    built = build_plan(config, BuildContext(out_dir=tmp_path))
    assert isinstance(built, CommandPlan)
    _aiperf_export(tmp_path / "router-bench" / "prefix_ratio_0.1_seed_0", 80.0, 900.0)
    _aiperf_export(tmp_path / "router-bench" / "prefix_ratio_0.9_seed_2", 20.5, 1500.0)
    # the runs themselves are aiperf's (tests/test_runners_local.py runs them): here, no-ops
    plan = msgspec.structs.replace(
        built, commands=tuple(msgspec.structs.replace(c, argv=("true",)) for c in built.commands)
    )
    assert run_plan(plan, config, tmp_path, log=lambda _l: None, stop=threading.Event()) == 0
    summary = json.loads((tmp_path / "router-bench" / "results_summary.json").read_text())
    assert summary == {
        "prefix_ratios": [0.1, 0.9],
        "ttft_values": [80.0, 20.5],
        "throughput_values": [900.0, 1500.0],
        "config": {"model": "org/model", "tokenizer": "/models/m", "isl": 100, "osl": 200,
                   "requests": 200, "concurrency": 20, "initial_seed": 0,
                   "num_prefix_prompts": 20},
        "missing_prefix_ratios": [0.5],
    }  # fmt: skip
    rollup = json.loads((tmp_path / "benchmark-rollup.json").read_text())
    assert rollup["benchmark_type"] == "router"
    assert rollup["config"] == {"model": "org/model", "isl": 100, "osl": 200}
    assert rollup["data"] == summary


def test_agentperf_and_lm_eval_arguments() -> None:
    ctx = BuildContext(
        out_dir=Path("/logs"), environ={"AGENTPERF_EXTRA_ARGS": "--x 1", "EVAL_CONC": "32"}
    )
    plan = build_plan(
        _config(type="agentperf", agentperf_client_dir="/c", agentperf_config="/w.yaml",
                concurrencies=[64, 1010], env={"K": "v"}),
        ctx,
    )  # fmt: skip
    assert isinstance(plan, CommandPlan)
    argv = plan.commands[0].argv
    assert argv[argv.index("--concurrencies") + 1] == "64,1010"
    assert argv[-2:] == ("--x", "1") and plan.commands[0].env == {"K": "v"}
    with pytest.raises(BenchConfigError, match="'agentperf' needs agentperf_client_dir"):
        build_plan(_config(type="agentperf"), ctx)
    lm = build_plan(_config(type="lm-eval"), ctx)
    assert isinstance(lm, CommandPlan)
    args = lm.commands[0].argv
    assert args[0] == "lm_eval"
    assert "num_concurrent=32" in args[args.index("--model_args") + 1]
    assert "base_url=http://10.0.0.1:8000/v1/completions" in args[args.index("--model_args") + 1]


def _run(
    plan: CommandPlan | ManualPlan, tmp_path: Path, stop: threading.Event | None = None
) -> int:
    config = _config(type="custom", command="true")
    return run_plan(plan, config, tmp_path, log=lambda _l: None, stop=stop or threading.Event())


def test_custom_runs_in_bash_and_propagates_the_exit_code(tmp_path: Path) -> None:
    plan = build_plan(
        _config(
            type="custom", command='echo "$GREETING" > out.txt; exit 7', env={"GREETING": "hi"}
        ),
        BuildContext(out_dir=tmp_path),
    )
    assert isinstance(plan, CommandPlan)
    assert _run(plan, tmp_path) == 7
    assert (tmp_path / "out.txt").read_text() == "hi\n"


def test_a_missing_client_says_so(tmp_path: Path) -> None:
    plan = CommandPlan(benchmark_type="lm-eval", commands=(Command(argv=("no-such-client-xyz",)),))
    with pytest.raises(BenchError) as err:
        _run(plan, tmp_path)
    assert err.value.exit_code == 127
    assert str(err.value) == (
        "lm-eval: cannot start 'no-such-client-xyz': not found on PATH; install it in the "
        "benchmark container"
    )


def test_aiperf_output_is_folded_into_the_rollup(tmp_path: Path) -> None:
    export = {"output_token_throughput": {"avg": 99.0}, "request_count": {"avg": 3}}
    art = tmp_path / "artifacts" / "m_trace_c2_x"
    target = str(art / "profile_export_aiperf.json")
    write = f"import pathlib; pathlib.Path({target!r}).write_text({json.dumps(export)!r})"
    plan = CommandPlan(
        benchmark_type="trace-replay",
        commands=(Command(argv=(sys.executable, "-c", write), mkdirs=(str(art),)),),
        fold="aiperf-per-concurrency",
        artifacts={2: str(art)},
    )
    assert _run(plan, tmp_path) == 0
    rollup = json.loads((tmp_path / "benchmark-rollup.json").read_text())
    assert rollup["benchmark_type"] == "trace-replay"
    assert rollup["runs"][0]["concurrency"] == 2
    assert rollup["runs"][0]["throughput_toks"] == 99.0
    assert (tmp_path / "benchmark-rollup.csv").is_file()


def test_manual_waits_until_stopped(tmp_path: Path) -> None:
    """The manual plan returns only once it is stopped: the stop comes first, then the return."""
    stop = threading.Event()
    order: list[str] = []

    def stopping() -> None:
        order.append("stop")
        stop.set()

    timer = threading.Timer(0.3, stopping)
    timer.start()
    assert _run(ManualPlan(), tmp_path, stop) == 0
    order.append("returned")
    assert order == ["stop", "returned"]


def test_a_custom_tokenizer_that_is_neither_a_path_nor_a_class_is_rejected() -> None:
    with pytest.raises(BenchConfigError) as err:
        build_plan(
            _config(type="sa-bench", isl=1, osl=1, concurrencies=[1], custom_tokenizer="glm"), CTX
        )
    assert str(err.value) == (
        "$.benchmark.custom_tokenizer: 'glm' is neither a local tokenizer nor a tokenizer class; "
        "set an absolute path to a folder holding tokenizer.json (or to the file), or a class "
        "path module.ClassName"
    )
    # a class path is accepted here (srt_bench.tokenizer imports it when the run starts)
    build_plan(
        _config(type="sa-bench", isl=1, osl=1, concurrencies=[1], custom_tokenizer="a.B"), CTX
    )


def test_sa_bench_needs_gpus_but_custom_does_not() -> None:
    doc = {"benchmark": {"type": "sa-bench", "isl": 1, "osl": 1, "concurrencies": [1]},
           "endpoint": "http://h:1", "model_name": "m", "total_gpus": 0}  # fmt: skip
    with pytest.raises(BenchConfigError) as err:
        build_plan(decode_run_config(msgspec.json.encode(doc)), CTX)
    assert str(err.value) == (
        "$.total_gpus: sa-bench reports per-GPU throughput and needs total_gpus >= 1, got 0"
    )
    doc["benchmark"] = {"type": "custom", "command": "true"}
    assert isinstance(build_plan(decode_run_config(msgspec.json.encode(doc)), CTX), CommandPlan)


def test_sa_bench_reads_the_dataset_names_of_the_schema_registry() -> None:
    with pytest.raises(BenchConfigError) as err:
        build_plan(
            _config(type="sa-bench", isl=1, osl=1, concurrencies=[1], dataset_name="sharegpt"), CTX
        )
    assert str(err.value) == (
        "$.benchmark.dataset_name: 'sharegpt' is not a dataset sa-bench reads; use 'random' or "
        "'custom'"
    )


def test_negative_lengths_are_refused_with_the_schema_registry_range() -> None:
    with pytest.raises(BenchConfigError) as err:
        build_plan(_config(type="sa-bench", isl=8, osl=-5, concurrencies=[1]), CTX)
    assert (
        str(err.value)
        == "$.benchmark.osl: -5 is out of range; osl must be an integer in [1, 10000000]"
    )

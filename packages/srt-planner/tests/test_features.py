"""Placement names, het jobs, pools, services, mounts, srun options, profiling, frontends."""

from __future__ import annotations

import pytest
import yaml
from planner_testkit import EXPORTERS, RecipeFactory

from srt_planner import JobPlan, PlanningError, plan_job
from srt_planner.plan import HttpProbe, ProcessSpec
from srt_schema.cluster import ClusterConfig

DISAGG = {"prefill": {"nodes": 1, "workers": 1}, "decode": {"nodes": 2, "workers": 2}}


def _by_name(plan: JobPlan) -> dict[str, ProcessSpec]:
    return {spec.name: spec for spec in plan.processes}


def test_first_and_last_decode_placement(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        roles=DISAGG,
        frontend={"enable_multiple_frontends": False, "placement": {"node": "first_decode"}},
        benchmark={
            "type": "sa-bench",
            "isl": 1,
            "osl": 1,
            "concurrencies": [1],
            "placement": {"node": "last_decode"},
        },
    )
    plan = plan_job(recipe, cluster, "n[0-2]", "1")
    specs = _by_name(plan)
    assert specs["frontend_0"].nodes == ("n1",)
    assert specs["benchmark"].nodes == ("n2",)
    assert plan.frontend_url == "http://n1:8000"


def test_last_decode_without_decode_workers(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(benchmark={"type": "sa-bench", "placement": {"node": "last_decode"}})
    with pytest.raises(PlanningError) as info:
        plan_job(recipe, cluster, "n0", "1")
    assert str(info.value) == (
        "$.benchmark.placement.node: 'last_decode' needs decode workers "
        "but no decode workers were found"
    )


def test_het_job_groups_on_every_srun(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        resources={"gpus_per_node": 4, "het_jobs": True},
        roles={"prefill": {"nodes": 2, "workers": 2}, "decode": {"nodes": 4, "workers": 1}},
        services=[{"name": "etcd", "type": "etcd", "placement": {"node": "dedicated"}}],
        frontend={"enable_multiple_frontends": False},
    )
    plan = plan_job(
        recipe, cluster, [], "1", het_groups=[["a0", "a1", "a2"], ["b0", "b1", "b2", "b3"]]
    )
    specs = _by_name(plan)
    assert (
        specs["service_etcd"].nodes == ("a0",)
        and "--het-group=0" in specs["service_etcd"].srun_argv
    )
    assert (
        specs["prefill_1_a2"].het_group == 0 and "--het-group=0" in specs["prefill_1_a2"].srun_argv
    )
    assert [s.name for s in plan.processes if s.role == "decode"] == [
        "decode_0_b0",
        "decode_0_b1",
        "decode_0_b2",
        "decode_0_b3",
    ]
    assert "--het-group=1" in specs["decode_0_b3"].srun_argv
    assert specs["frontend_0"].nodes == ("a1",) and "--het-group=0" in specs["frontend_0"].srun_argv
    dcgm = specs["service_dcgm-exporter_b2"]
    assert dcgm.het_group == 1 and "--het-group=1" in dcgm.srun_argv


def test_pools_and_riders_e12(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    services = [
        {"name": "train", "command": ["sleep", "inf"], "nodes": 2},
        {"name": "napper", "command": ["sleep", "inf"], "nodes": 1},
        {"name": "watcher", "command": ["echo", "{pool_nodes}"], "placement": {"pool": "train"}},
    ]
    recipe = make_recipe(services=services, benchmark={"type": "custom", "command": "true"})
    plan = plan_job(recipe, cluster, "n[0-3]", "1")
    names = [
        s.name for s in plan.processes if s.kind == "service" and s.role not in {"etcd", *EXPORTERS}
    ]
    assert names == [
        "service_train_n1",
        "service_train_n2",
        "service_napper",
        "service_watcher_n1",
        "service_watcher_n2",
    ]
    assert _by_name(plan)["service_watcher_n2"].argv == ("echo", "n1,n2")
    env = _by_name(plan)["benchmark"].env
    assert (
        env["SRT_SERVICE_TRAIN_NODES"],
        env["SRT_SERVICE_TRAIN_NODE_COUNT"],
        env["SRT_WORKER_NODES"],
    ) == ("n1,n2", "2", "n0")
    assert _by_name(plan)["benchmark"].argv == ("bash", "-lc", "true")


def test_sequential_node_start_orders_batches(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine={"type": "trtllm", "sequential_node_start": 2},
        resources={"gpus_per_node": 8},
        roles={"agg": {"nodes": 1, "workers": 4, "gpus": 2}},
        frontend={"enable_multiple_frontends": False},
    )
    plan = plan_job(recipe, cluster, "n0", "1")
    workers = [s for s in plan.processes if s.kind == "worker"]
    assert [s.order for s in workers] == [0, 0, 1, 1]
    probe = workers[0].readiness
    assert isinstance(probe, HttpProbe) and probe.port == 7500


def test_mounts_and_srun_options(make_recipe: RecipeFactory) -> None:
    cluster = ClusterConfig(
        default_mounts={"/cluster/data": "/data"}, default_bash_preamble="ulimit -n 65536"
    )
    recipe = make_recipe(
        container_mounts={"/scratch/{job_id}": "/scratch"},
        extra_mount=["/opt/tools:/tools:ro"],
        srun_options={"mem": "0", "exclusive": ""},
        roles={"agg": {"nodes": 1, "workers": 1, "srun_options": {"mem": "500G"}}},
        services=[
            {
                "name": "side",
                "command": ["sleep", "1"],
                "srun_options": {"mem": "1G"},
                "cpus_per_task": 4,
            }
        ],
        frontend={"enable_multiple_frontends": False},
    )
    plan = plan_job(recipe, cluster, "n0", "77")
    worker, side = _by_name(plan)["agg_0_n0"], _by_name(plan)["service_side"]
    assert worker.container is not None
    assert [(m.host, m.container, m.readonly, m.source) for m in worker.container.mounts] == [
        ("./outputs/77/logs", "/logs", False, "built-in"),
        ("/models/qwen3", "/model", False, "built-in"),
        ("/cluster/data", "/data", False, "cluster"),
        ("/opt/tools", "/tools", True, "recipe"),
        ("/scratch/77", "/scratch", False, "recipe"),
    ]
    assert "--mem=500G" in worker.srun_argv and "--exclusive" in worker.srun_argv
    assert (
        "--mem=1G" in side.srun_argv
        and side.srun_argv[side.srun_argv.index("--cpus-per-task") + 1] == "4"
    )
    assert worker.srun_argv[-1].startswith("ulimit -n 65536 && export ")


def test_profiling_selected_worker_only(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        roles={"agg": {"nodes": 1, "workers": 2, "gpus": 4}},
        profiling={
            "type": "nsys",
            "aggregated": {
                "start_step": 5,
                "stop_step": 9,
                "capture_scope": "selected",
                "worker_index": 1,
            },
        },
        frontend={"enable_multiple_frontends": False},
    )
    plan = plan_job(recipe, cluster, "n0", "1")
    first, second = _by_name(plan)["agg_0_n0"], _by_name(plan)["agg_1_n0"]
    assert first.argv[0] != "nsys" and first.profile is None
    assert (
        second.argv[:2] == ("nsys", "profile")
        and second.argv[second.argv.index("-o") + 1]
        == "/logs/profiles/agg/n0_agg_w1_profile_gpu4-5-6-7"
    )
    assert second.profile is not None and (second.profile.start_step, second.profile.stop_step) == (
        5,
        9,
    )
    assert (second.env["PROFILE_AGG_START_STEP"], second.env["TLLM_PROFILE_START_STOP"]) == (
        "5",
        "5-9",
    )


def test_otel_and_frontend_env(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        observability={"enable_otel": True, "otel_endpoint": "http://otel:4317"},
        environment={"SHARED": "recipe"},
        frontend={
            "enable_multiple_frontends": False,
            "env": {"SHARED": "frontend"},
            "numa_bind": True,
        },
    )
    plan = plan_job(recipe, cluster, "n0", "1")
    frontend, worker = _by_name(plan)["frontend_0"], _by_name(plan)["agg_0_n0"]
    assert worker.env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel:4317"
    assert (
        frontend.env["SHARED"] == "frontend"
        and frontend.env["OTEL_SERVICE_NAME"] == "test-job-frontend"
    )
    assert frontend.argv[:3] == ("numactl", "--cpunodebind=0", "--membind=0")


def test_nginx_conf_with_session_affinity(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        roles={"agg": {"nodes": 3, "workers": 3}},
        frontend={"num_additional_frontends": 0, "nginx_session_affinity": True},
    )
    plan = plan_job(recipe, cluster, "n[0-2]", "1", addresses={"n1": "10.0.0.2"})
    conf = {f.path: f.content for f in plan.files}["nginx.conf"]
    assert "map $http_x_dynamo_session_id $frontend_hash_key {" in conf
    assert "        hash $frontend_hash_key consistent;\n        server 10.0.0.2:8180;\n" in conf
    nginx = _by_name(plan)["nginx"]
    assert nginx.argv == ("bash", "-c", "nginx -c /logs/nginx.conf -g 'daemon off;'")
    assert "--container-remap-root" in nginx.srun_argv and nginx.srun_argv[-3:] == nginx.argv


def test_the_additional_frontends_asked_for_each_get_a_node(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    # 4 worker nodes: nginx on the head node, frontends on the 3 others
    recipe = make_recipe(
        roles={"agg": {"nodes": 4, "workers": 4}}, frontend={"num_additional_frontends": 2}
    )
    plan = plan_job(recipe, cluster, "n[0-3]", "1")
    frontends = [p for p in plan.processes if p.kind == "frontend" and p.name != "nginx"]
    assert sorted(p.nodes[0] for p in frontends) == ["n1", "n2", "n3"]
    # the default (9) means one per other node: 3 here, as the reference places them
    default = make_recipe(roles={"agg": {"nodes": 4, "workers": 4}})
    plan = plan_job(default, cluster, "n[0-3]", "1")
    assert len([p for p in plan.processes if p.kind == "frontend" and p.name != "nginx"]) == 3


def test_more_additional_frontends_than_nodes_are_placed_not_capped(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        roles={"agg": {"nodes": 4, "workers": 4}}, frontend={"num_additional_frontends": 5}
    )
    plan = plan_job(recipe, cluster, "n[0-3]", "1")
    frontends = [p for p in plan.processes if p.kind == "frontend"]
    # six frontends round-robin over the three nodes besides nginx's, a port each on its node
    assert [(p.nodes[0], p.ports["http"]) for p in frontends] == [
        ("n1", 8180),
        ("n2", 8180),
        ("n3", 8180),
        ("n1", 8181),
        ("n2", 8181),
        ("n3", 8181),
    ]
    conf = {f.path: f.content for f in plan.files}["nginx.conf"]
    assert conf.count("        server ") == 6


def test_additional_frontends_on_a_one_node_job_share_it_with_nginx(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(frontend={"num_additional_frontends": 1})
    plan = plan_job(recipe, cluster, "n0", "1")
    ports = sorted(
        (p.nodes[0], p.ports["http"]) for p in plan.processes if p.kind in ("frontend", "proxy")
    )
    assert ports == [("n0", 8000), ("n0", 8180), ("n0", 8181)]


def test_trtllm_serve_disaggregated_orchestrator(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine={"type": "trtllm", "numa_memory_bind": True},
        roles={"prefill": {"nodes": 1, "workers": 1}, "decode": {"nodes": 1, "workers": 1}},
        frontend={
            "type": "trtllm_serve",
            "enable_multiple_frontends": False,
            "ctx_router": {"type": "round_robin"},
        },
    )
    plan = plan_job(recipe, cluster, "n[0-1]", "1")
    specs = _by_name(plan)
    assert specs["trtllm_serve_orchestrator"].argv == (
        "trtllm-serve",
        "disaggregated",
        "--config",
        "/logs/ser.yaml",
    )
    ser = yaml.safe_load({f.path: f.content for f in plan.files}["ser.yaml"])
    assert ser == {
        "context_servers": {
            "num_instances": 1,
            "router": {"type": "round_robin"},
            "urls": ["n0:6100"],
        },
        "generation_servers": {"num_instances": 1, "urls": ["n1:6100"]},
        "hostname": "0.0.0.0",
        "port": 8000,
    }
    assert specs["prefill_0_n0"].argv[:5] == (
        "numactl",
        "-m",
        "0,1",
        "trtllm-llmapi-launch",
        "trtllm-serve",
    )


def test_direct_vllm_serves_the_public_port(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine="vllm", frontend={"type": "vllm", "enable_multiple_frontends": False}
    )
    plan = plan_job(recipe, cluster, "n0", "1")
    worker = _by_name(plan)["agg_0_n0"]
    assert worker.argv[:8] == (
        "vllm",
        "serve",
        "/model",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        "--served-model-name",
    )
    assert not [s for s in plan.processes if s.kind == "frontend" or s.role in ("etcd", "nats")]
    assert plan.health.family == "direct" and plan.frontend_url == "http://n0:8000"


def test_mooncake_master_env_and_kvbm(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        services=[{"name": "mooncake-master", "type": "mooncake-master"}],
        roles={"agg": {"nodes": 1, "workers": 1, "env": {"DYN_CONNECTOR": "kvbm"}}},
        frontend={"enable_multiple_frontends": False},
    )
    plan = plan_job(recipe, cluster, "n0", "1", addresses={"n0": "10.1.1.1"})
    specs = _by_name(plan)
    master = specs["service_mooncake-master"]
    assert master.phase == "before_workers" and master.ports == {
        "rpc": 8700,
        "http": 8701,
        "metrics": 8702,
    }
    env = specs["agg_0_n0"].env
    assert env["MOONCAKE_MASTER"] == "10.1.1.1:8700"
    assert env["MOONCAKE_TE_META_DATA_SERVER"] == "http://10.1.1.1:8701/metadata"
    assert env["MOONCAKE_LOCAL_HOSTNAME"] == "10.1.1.1"
    assert (env["DYN_KVBM_LEADER_ZMQ_PUB_PORT"], env["DYN_KVBM_LEADER_ZMQ_ACK_PORT"]) == (
        "5600",
        "5601",
    )


def test_services_only_job_heads_on_the_first_pool_node(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        roles={},
        frontend={"type": "none"},
        services=[
            {
                "name": "train",
                "command": ["torchrun", "{pool_node_count}"],
                "nodes": 2,
                "terminal": True,
            }
        ],
    )
    plan = plan_job(recipe, cluster, "n[0-1]", "1")
    assert (plan.node_roles.head, plan.node_roles.workers, plan.node_roles.pools) == (
        "n0",
        (),
        {"train": ("n0", "n1")},
    )
    services = [s for s in plan.processes if s.kind == "service" and s.role not in EXPORTERS]
    assert [(s.name, s.argv, s.terminal) for s in services] == [
        ("service_train_n0", ("torchrun", "2"), True),
        ("service_train_n1", ("torchrun", "2"), True),
    ]
    assert plan.health.family == "none"


def test_every_mocker_field_has_its_flag(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    engine = {
        "type": "mocker",
        "engine_type": "sglang",
        "speedup_ratio": 2.5,
        "decode_speedup_ratio": 3.0,
        "num_gpu_blocks_override": 100,
        "max_num_seqs": 7,
        "max_num_batched_tokens": 99,
        "block_size": 32,
        "data_parallel_size": 2,
        "num_workers": 3,
        "startup_time": 1.5,
        "kv_transfer_bandwidth": 10.0,
        "kv_cache_dtype": "fp8",
        "enable_prefix_caching": False,
        "enable_chunked_prefill": False,
        "preemption_mode": "swap",
    }
    recipe = make_recipe(
        engine=engine,
        roles={"prefill": {"nodes": 1, "workers": 1}, "decode": {"nodes": 1, "workers": 1}},
        frontend={"enable_multiple_frontends": False},
    )
    argv = _by_name(plan_job(recipe, cluster, "n[0-1]", "1"))["prefill_0_n0"].argv
    assert argv[3:] == (
        "--model-path",
        "/model",
        "--model-name",
        "qwen3",
        "--disaggregation-mode",
        "prefill",
        "--bootstrap-ports",
        "7200",
        "--engine-type",
        "sglang",
        "--speedup-ratio",
        "2.5",
        "--data-parallel-size",
        "2",
        "--num-gpu-blocks-override",
        "100",
        "--max-num-seqs",
        "7",
        "--max-num-batched-tokens",
        "99",
        "--decode-speedup-ratio",
        "3.0",
        "--block-size",
        "32",
        "--num-workers",
        "3",
        "--startup-time",
        "1.5",
        "--kv-transfer-bandwidth",
        "10.0",
        "--kv-cache-dtype",
        "fp8",
        "--no-enable-prefix-caching",
        "--no-enable-chunked-prefill",
        "--preemption-mode",
        "swap",
    )


def test_default_exporters_follow_tachometer(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        roles={"agg": {"nodes": 2, "workers": 2}}, frontend={"enable_multiple_frontends": False}
    )
    plan = plan_job(recipe, cluster, "n[0-1]", "1")
    specs = _by_name(plan)
    dcgm = specs["service_dcgm-exporter_n1"]
    assert dcgm.argv == ("dcgm-exporter", "--collect-interval=1000", "--address", ":9401")
    assert dcgm.srun_argv[-4:] == dcgm.argv  # distroless image: no bash wrapper
    assert dcgm.container is not None and dcgm.container.image.startswith(
        "nvcr.io#nvidia/k8s/dcgm-exporter"
    )
    assert (
        dcgm.critical is False and dcgm.implied_by == "observability.tachometer default exporters"
    )
    assert specs["service_process-exporter_n0"].container is None
    assert "process-exporter.yml" in {f.path for f in plan.files}
    scrape = {f.path: f.content for f in plan.files}["tachometer_config.json"]
    assert '"name":"dcgm-exporter_n1","url":"http://n1:9401/metrics"' in scrape
    off = make_recipe(observability={"tachometer": {"default_exporters": False}})
    assert not [s for s in plan_job(off, cluster, "n0", "1").processes if s.role in EXPORTERS]


def test_no_image_exporters_without_a_container_runtime(make_recipe: RecipeFactory) -> None:
    cluster = ClusterConfig(container_runtime="none", launcher="local")
    plan = plan_job(make_recipe(), cluster, "n0", "1")
    assert not [s for s in plan.processes if s.role in EXPORTERS]


def test_trtllm_numa_cpu_bind_wrapper_is_a_plan_file(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine={"type": "trtllm", "numa_cpu_bind": True, "numa_memory_bind": "local"},
        frontend={"type": "trtllm_serve", "enable_multiple_frontends": False},
    )
    plan = plan_job(recipe, cluster, "n0", "1")
    worker = _by_name(plan)["agg_0_n0"]
    assert worker.argv[:4] == (
        "bash",
        "/logs/numa_cpu_bind.sh",
        "--bind-memory",
        "trtllm-llmapi-launch",
    )
    assert worker.env["TLLM_NUMA_AWARE_WORKER_AFFINITY"] == "0"
    script = {f.path: f for f in plan.files}["numa_cpu_bind.sh"]
    assert script.mode == 0o755 and "taskset -c" in script.content


@pytest.mark.parametrize(
    ("source", "settings"),
    [
        (None, ["kind=pypi", "requirements=(ai-dynamo-runtime==1.6.1 ai-dynamo==1.6.1)"]),
        ({"pypi": "1.4.2"}, ["requirements=(ai-dynamo-runtime==1.4.2 ai-dynamo==1.4.2)"]),
        (
            {"wheel": "/wheels/ai_dynamo-1.7.0-py3-none-any.whl"},
            ["kind=wheel", "wheel_file=/wheels/ai_dynamo-1.7.0-py3-none-any.whl"],
        ),
        (
            {"wheel": "1.2.0.dev20260426"},
            [
                "kind=wheel",
                "pre=1",
                "requirements=(ai-dynamo-runtime==1.2.0.dev20260426 ai-dynamo==1.2.0.dev20260426)",
            ],
        ),
        (
            {"rev": "v1.4.2"},
            ["kind=git", "repo=https://github.com/ai-dynamo/dynamo.git", "want=v1.4.2", "pinned=0"],
        ),
        (
            {"git": "https://example.org/dynamo.git", "rev": "v9", "sha": "abcdef12"},
            ["repo=https://example.org/dynamo.git", "want=abcdef12", "pinned=1"],
        ),
    ],
)
def test_dynamo_install_follows_the_source(
    make_recipe: RecipeFactory, cluster: ClusterConfig, source: object, settings: list[str]
) -> None:
    dynamo = {"source": source} if source is not None else {}
    recipe = make_recipe(dynamo=dynamo, frontend={"type": "dynamo"})
    plan = plan_job(recipe, cluster, "n[0-1]", "1")
    script = {f.path: f for f in plan.files}["srt_dynamo_install.sh"]
    assert script.mode == 0o755
    lines = script.content.splitlines()
    for line in settings:
        assert line in lines, script.content[:2000]
    workers = [p for p in plan.processes if p.kind == "worker"]
    assert workers
    for worker in workers:
        assert f"bash /logs/srt_dynamo_install.sh {worker.nodes[0]}" in worker.preamble

"""plan_job end to end on small recipes: ports, frontends, env precedence, runtimes, errors."""

from __future__ import annotations

import msgspec
import pytest
from planner_testkit import EXPORTERS, RecipeFactory

from srt_planner import JobPlan, PlanningError, plan_allocation, plan_job
from srt_planner.plan import ProcessSpec
from srt_schema.cluster import ClusterConfig

E8_ROLES = {
    "prefill": {"nodes": 2, "workers": 4, "gpus": 2, "kv_events": True},
    "decode": {"nodes": 4, "workers": 2, "gpus": 8},
}


def _by_name(plan: JobPlan) -> dict[str, ProcessSpec]:
    return {spec.name: spec for spec in plan.processes}


def test_e8_ports_masks_and_frontends(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        resources={"gpus_per_node": 4, "gpu_type": "gb200"},
        roles=E8_ROLES,
        frontend={"args": {"router-mode": "kv"}},
    )
    plan = plan_job(recipe, cluster, "n[0-5]", "7")
    workers = [s for s in plan.processes if s.kind == "worker"]
    rows = [
        (
            s.name,
            s.gpus,
            s.ports["sys"],
            s.ports.get("http"),
            s.ports.get("bootstrap"),
            s.ports["kv_events"],
        )
        for s in workers
    ]
    assert rows == [
        ("prefill_0_n0", (0, 1), 7500, 6100, 7200, 5200),
        ("prefill_1_n0", (2, 3), 7501, 6132, 7201, 5201),
        ("prefill_2_n1", (0, 1), 7502, 6100, 7200, 5202),
        ("prefill_3_n1", (2, 3), 7503, 6132, 7201, 5203),
        ("decode_0_n2", (0, 1, 2, 3), 7504, 6100, None, 5204),
        ("decode_0_n3", (0, 1, 2, 3), 7505, None, None, 5205),
        ("decode_1_n4", (0, 1, 2, 3), 7506, 6100, None, 5206),
        ("decode_1_n5", (0, 1, 2, 3), 7507, None, None, 5207),
    ]
    specs = _by_name(plan)
    assert specs["prefill_1_n0"].env["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert "CUDA_VISIBLE_DEVICES" not in specs["decode_0_n2"].env
    assert (
        '{"publisher": "zmq", "topic": "kv-events", "endpoint": "tcp://*:5200"}'
        in specs["prefill_0_n0"].argv
    )
    follower = specs["decode_0_n3"].argv
    assert follower[follower.index("--dist-init-addr") + 1] == "n2:8300"
    assert follower[follower.index("--node-rank") + 1] == "1"
    frontends = [s for s in plan.processes if s.kind == "frontend"]
    assert [(s.nodes[0], s.argv[-3:]) for s in frontends] == [
        (node, ("--http-port=8180", "--router-mode", "kv"))
        for node in ("n1", "n2", "n3", "n4", "n5")
    ]
    assert specs["nginx"].nodes == ("n0",)
    services = [s.name for s in plan.processes if s.kind == "service" and s.role not in EXPORTERS]
    assert services == ["service_etcd"]
    assert (plan.health.expected_prefill, plan.health.expected_decode) == (4, 2)
    assert plan_allocation(recipe, cluster).nodes == 6


def test_e9_sglang_router_worker_urls(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        roles={"agg": {"nodes": 2, "workers": 4, "gpus": 4}},
        frontend={
            "type": "sglang-router",
            "enable_multiple_frontends": False,
            "args": {"policy": "cache_aware"},
        },
    )
    plan = plan_job(recipe, cluster, "n[0-1]", "1", addresses={"n0": "10.0.0.1", "n1": "10.0.0.2"})
    router = _by_name(plan)["sglang_router_0"]
    assert router.argv == (
        "python3",
        "-m",
        "sglang_router.launch_router",
        "--worker-urls",
        "http://10.0.0.1:6100",
        "http://10.0.0.1:6132",
        "http://10.0.0.2:6100",
        "http://10.0.0.2:6132",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        "--policy",
        "cache_aware",
    )
    workers = [s for s in plan.processes if s.kind == "worker"]
    assert all(
        s.argv[2] == "sglang.launch_server" and "--request-plane" not in s.argv for s in workers
    )
    assert all("ETCD_ENDPOINTS" not in s.env for s in workers)
    assert not [s for s in plan.processes if s.kind == "service" and s.role not in EXPORTERS]
    assert plan.health.family == "router" and plan.health.url == "http://10.0.0.1:8000/workers"


def test_e14_per_worker_sidecar(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    service = {
        "name": "gpu-watch",
        "command": [
            "nvidia-smi",
            "dmon",
            "-i",
            "{worker_gpus}",
            "--tag",
            "{worker_role}-{worker_index}",
        ],
        "placement": {"node": "agg", "per": "worker"},
        "start": "before_workers",
        "env": {"WATCH_GPUS": "{worker_gpu_count}"},
    }
    recipe = make_recipe(roles={"agg": {"nodes": 1, "workers": 2, "gpus": 1}}, services=[service])
    plan = plan_job(recipe, cluster, "node1", "1")
    specs = _by_name(plan)
    first, second = specs["service_gpu-watch_agg_0_node1"], specs["service_gpu-watch_agg_1_node1"]
    assert first.argv == ("nvidia-smi", "dmon", "-i", "0", "--tag", "agg-0")
    assert second.argv[3] == "1"
    assert first.env["CUDA_VISIBLE_DEVICES"] == "0" and first.env["WATCH_GPUS"] == "1"
    assert first.log_file == "service_gpu-watch_agg_0_node1.out"
    assert first.phase == "before_workers"


def test_env_precedence_and_templating(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        roles={
            "agg": {
                "nodes": 2,
                "workers": 2,
                "env": {"A": "role", "B": "role-{node}", "C": "{other}"},
            }
        },
        environment={"A": "recipe-{node_id}"},
        frontend={"enable_multiple_frontends": False},
    )
    plan = plan_job(recipe, cluster, "n[0-1]", "1")
    worker = _by_name(plan)["agg_1_n1"]
    assert (worker.env["A"], worker.env["B"], worker.env["C"]) == ("recipe-1", "role-n1", "{other}")


def test_mocker_argv_for_local_quickstart(make_recipe: RecipeFactory) -> None:
    cluster = ClusterConfig(container_runtime="none", launcher="local", runtime_python="/opt/venv")
    recipe = make_recipe(
        model={"path": "hf:Qwen/Qwen3-0.6B"},
        engine={
            "type": "mocker",
            "speedup_ratio": 50,
            "block_size": 16,
            "enable_prefix_caching": False,
        },
        frontend={"enable_multiple_frontends": False},
    )
    plan = plan_job(recipe, cluster, "localhost", "1", log_dir="/logs-of-1")
    worker = _by_name(plan)["agg_0_localhost"]
    assert worker.argv == (
        "/opt/venv/bin/python",
        "-m",
        "dynamo.mocker",
        "--model-path",
        "Qwen/Qwen3-0.6B",
        "--model-name",
        "Qwen3-0.6B",
        "--engine-type",
        "vllm",
        "--speedup-ratio",
        "50.0",
        "--data-parallel-size",
        "1",
        "--num-gpu-blocks-override",
        "16384",
        "--max-num-seqs",
        "256",
        "--max-num-batched-tokens",
        "8192",
        "--block-size",
        "16",
        "--no-enable-prefix-caching",
    )
    assert worker.srun_argv == () and worker.container is None
    # Only the fingerprint capture runs before the engine (the LocalLauncher runs it first).
    assert [line.split(" || ")[1] for line in worker.preamble] == [
        "timeout 60 /opt/venv/bin/python /logs-of-1/srt_fingerprint.py "
        "/logs-of-1/fingerprint_agg_w0.json"
    ]
    assert _by_name(plan)["frontend_0"].argv == (
        "/opt/venv/bin/python",
        "-m",
        "dynamo.frontend",
        "--http-port=8000",
    )
    assert plan.served_model_name == "Qwen3-0.6B"


def test_container_runtime_none_on_slurm_has_no_container_flags(make_recipe: RecipeFactory) -> None:
    cluster = ClusterConfig(container_runtime="none", runtime_python="/usr/bin/python3.11")
    plan = plan_job(make_recipe(), cluster, "n0", "5")
    worker = _by_name(plan)["agg_0_n0"]
    assert worker.srun_argv[:12] == (
        "srun",
        "--jobid",
        "5",
        "--overlap",
        "--nodes",
        "1",
        "--ntasks",
        "1",
        "--nodelist",
        "n0",
        "--output",
        "./outputs/5/logs/n0_agg_w0.out",
    )
    assert not [a for a in worker.srun_argv if a.startswith("--container")]
    assert worker.argv[0] == "/usr/bin/python3.11"


def test_local_launcher_keeps_ports_of_different_nodes_apart(make_recipe: RecipeFactory) -> None:
    cluster = ClusterConfig(container_runtime="none", launcher="local")
    recipe = make_recipe(
        engine="mocker",
        roles={
            "prefill": {"nodes": 1, "workers": 2, "gpus": 4},
            "decode": {"nodes": 2, "workers": 2, "gpus": 8},
        },
        frontend={"num_additional_frontends": 1},
    )
    plan = plan_job(recipe, cluster, "n[0-2]", "1")
    ports = [(p, s.name) for s in plan.processes for p in s.ports.values() if p]
    assert len({p for p, _ in ports}) == len(ports)
    assert [s.ports["http"] for s in plan.processes if s.kind == "frontend"] == [8180, 8181]


def test_trtllm_packed_endpoint_is_one_mpi_step(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine="trtllm",
        resources={"gpus_per_node": 4},
        roles={
            "prefill": {"nodes": 3, "workers": 2, "gpus": 6, "args": {"tensor_parallel_size": 6}},
            "decode": {"nodes": 1, "workers": 1},
        },
        frontend={"enable_multiple_frontends": False},
    )
    plan = plan_job(recipe, cluster, "A,B,C,D", "3", addresses={"A": "10.0.0.1", "C": "10.0.0.3"})
    specs = _by_name(plan)
    first, second = specs["prefill_0_A"], specs["prefill_1_C"]
    assert first.nodes == ("A", "B") and first.node_gpus == {"A": (0, 1, 2, 3), "B": (0, 1)}
    assert (first.env["MASTER_ADDR"], first.env["MASTER_PORT"]) == ("10.0.0.1", "29500")
    assert (second.env["MASTER_ADDR"], second.env["MASTER_PORT"]) == ("10.0.0.3", "29502")
    argv = first.srun_argv
    assert argv[argv.index("--ntasks") + 1] == "6"
    assert argv[argv.index("--nodelist") + 1] == "A,A,A,A,B,B"
    assert (
        "--nodes" not in argv
        and "--distribution=arbitrary" in argv
        and "--ntasks-per-node=4" in argv
    )
    assert (
        'case "$SLURMD_NODENAME" in A) export CUDA_VISIBLE_DEVICES=0,1,2,3;; '
        "B) export CUDA_VISIBLE_DEVICES=0,1;; *) exit 1;; esac" in first.preamble
    )
    config = {f.path: f.content for f in plan.files}["trtllm_config_prefill.yaml"]
    assert config == "enable_iter_perf_stats: false\ntensor_parallel_size: 6\n"


def test_plan_round_trips_through_json(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        resources={"gpus_per_node": 4},
        roles=E8_ROLES,
        benchmark={"type": "sa-bench", "isl": 1, "osl": 1, "concurrencies": [1]},
    )
    plan = plan_job(recipe, cluster, "n[0-5]", "7")
    data = msgspec.json.encode(plan)
    assert msgspec.json.decode(data, type=JobPlan) == plan
    assert msgspec.json.encode(plan_job(recipe, cluster, "n[0-5]", "7")) == data


def test_too_few_nodes_names_the_role(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    with pytest.raises(PlanningError) as info:
        plan_job(
            make_recipe(roles=E8_ROLES, resources={"gpus_per_node": 4}), cluster, "n[0-4]", "1"
        )
    assert str(info.value).startswith(
        "$.roles.decode: decode worker 1 needs 8 GPU(s) but the 5 worker node(s) x 4 GPUs (n[0-4])"
    )


def test_direct_frontend_needs_one_agg_worker(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        frontend={"type": "vllm", "enable_multiple_frontends": False},
        engine="vllm",
        roles={"agg": {"nodes": 1, "workers": 2}},
    )
    with pytest.raises(PlanningError) as info:
        plan_job(recipe, cluster, "n0", "1")
    assert str(info.value) == (
        "$.frontend.type: 'vllm' serves exactly one agg worker directly but the recipe has 2; "
        "set roles.agg.workers: 1 or use a router frontend"
    )


def test_nats_only_when_a_plane_uses_it(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    plan = plan_job(make_recipe(dynamo={"request_plane": "nats"}), cluster, "n0", "1")
    names = [s.name for s in plan.processes if s.kind == "service" and s.role not in EXPORTERS]
    assert names == ["service_etcd", "service_nats"]
    assert _by_name(plan)["agg_0_n0"].env["NATS_SERVER"] == "nats://n0:4222"


def test_role_over_its_node_budget_is_named(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    roles = {"prefill": {"nodes": 1, "workers": 2, "gpus": 8}, "decode": {"nodes": 1, "workers": 1}}
    with pytest.raises(PlanningError) as info:
        plan_job(make_recipe(roles=roles), cluster, "n[0-2]", "1")
    assert str(info.value) == (
        "$.roles.prefill: prefill does not fit: 2 worker(s) x 8 GPU(s) need more than the 1 "
        "node(s) x 8 GPUs of roles.prefill.nodes; raise roles.prefill.nodes or lower "
        "roles.prefill.workers / .gpus"
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"engine": "mocker", "roles": {"agg": {"nodes": 1, "workers": 1, "sidecar": True}}},
            "$.roles.agg.sidecar: the Dynamo sidecar mode is planned for sglang, vllm and "
            "trtllm, not mocker; remove 'sidecar: true' (and dynamo.sidecar)",
        ),
    ],
)
def test_unplanned_features_fail_loudly(
    make_recipe: RecipeFactory, cluster: ClusterConfig, fields: dict[str, object], message: str
) -> None:
    with pytest.raises(PlanningError) as info:
        plan_job(make_recipe(**fields), cluster, "n0", "1")
    assert str(info.value) == message


def test_vllm_data_parallel_health_counts_node_local_processes(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    dp = {"data-parallel-size": 16, "tensor-parallel-size": 1}
    recipe = make_recipe(
        engine="vllm",
        roles={
            "prefill": {"nodes": 2, "workers": 1, "gpus": 16, "args": dp},
            "decode": {"nodes": 2, "workers": 1, "gpus": 16, "args": dp},
        },
    )
    plan = plan_job(recipe, cluster, "n[0-3]", "1", addresses={"n0": "10.0.0.1"})
    assert (plan.health.expected_prefill, plan.health.expected_decode) == (2, 2)
    follower = _by_name(plan)["prefill_0_n1"].argv
    assert follower[follower.index("--data-parallel-start-rank") + 1] == "8"
    assert follower[follower.index("--data-parallel-address") + 1] == "10.0.0.1"


def test_local_launcher_implies_no_containers(make_recipe: RecipeFactory) -> None:
    cluster = ClusterConfig(launcher="local", container_runtime="pyxis")
    plan = plan_job(make_recipe(), cluster, "n0", "1")
    assert plan.container_runtime == "none"
    assert all(s.container is None and s.srun_argv == () for s in plan.processes)


@pytest.mark.parametrize(
    ("image", "declared", "device_ids"),
    [
        ("vllm/vllm-openai:v0.24.0", None, True),
        ("vllm/vllm-openai:v0.21.0", None, False),  # older than --device-ids: the mask
        ("/images/vllm.sqsh", None, True),  # version not said: the newest vLLM's flag
        ("/images/vllm.sqsh", "0.20.1", False),  # srtslurm.yaml container_versions
    ],
)
def test_a_pinned_vllm_older_than_device_ids_gets_the_gpu_mask(
    make_recipe: RecipeFactory,
    cluster: ClusterConfig,
    image: str,
    declared: str | None,
    device_ids: bool,
) -> None:
    recipe = make_recipe(
        model={"path": "/models/m", "container": image, "precision": "bf16"},
        engine={"type": "vllm"},
        roles={"agg": {"nodes": 1, "workers": 2, "gpus": 2}},
    )
    if declared is not None:
        cluster = msgspec.structs.replace(cluster, container_versions={image: {"vllm": declared}})
    plan = plan_job(recipe, cluster, "n[0-0]", "7")
    second = _by_name(plan)["agg_1_n0"]
    assert ("--device-ids" in second.argv) is device_ids
    if device_ids:
        assert second.argv[second.argv.index("--device-ids") + 1] == "2,3"
        assert "CUDA_VISIBLE_DEVICES" not in second.env
    else:
        assert second.env["CUDA_VISIBLE_DEVICES"] == "2,3"

"""Fields srt does not execute yet are refused at validate, by exact message; their defaults load.

Every row of ``srt_schema.validate.unsupported_rules`` (recipe and srtslurm.yaml) is checked here;
``tests/test_schema_ledger.py`` checks that the ledger's ``refused`` rows are refused.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document
from srt_schema.clusterconfig import parse_cluster_config
from srt_schema.errors import ClusterConfigError
from srt_schema.overrides import deep_merge
from srt_schema.validate.unsupported_rules import RECIPE_UNSUPPORTED

_MOCKER: dict[str, Any] = {
    "schema": 2,
    "name": "unit",
    "model": {"path": "/models/tiny", "container": "none", "precision": "bf16"},
    "resources": {"gpus_per_node": 2},
    "engine": {"type": "mocker"},
    "roles": {"agg": {"nodes": 1, "workers": 1}},
    "frontend": {"type": "dynamo"},
    "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]},
}

_ROLE_MOCKER = (
    "a role-specific mocker engine is not supported (the mocker needs the Dynamo frontend, which "
    "role-specific engines do not support), so its settings would never run; use one top-level "
    "engine: {type: mocker, ...} for every role"
)
_ROLE_PUBLISH = (
    "a role-specific trtllm engine runs under frontend.type trtllm_serve, which takes no publish "
    "flags (they are Dynamo worker flags); remove publish_metrics and publish_events_and_metrics, "
    "or use one top-level trtllm engine with the Dynamo frontend"
)
_BENCH_SWEEP = (
    "benchmark.sweep is read by no runner (the reference ignores it too); remove it and put the "
    "values in the top-level sweep: block (one job per combination, {name} placeholders in the "
    "recipe)"
)
_ROLE_TRTLLM: dict[str, Any] = {
    "engine": None,
    "model": {"container": "img:1"},
    "frontend": {"type": "trtllm_serve", "enable_multiple_frontends": False},
}


def _refusals(fragment: dict[str, Any], base: dict[str, Any] = _MOCKER) -> list[tuple[str, str]]:
    """The (path, message) issues of the unsupported-field rules for ``base`` + ``fragment``."""
    messages = {row.message for row in RECIPE_UNSUPPORTED}
    try:
        load_recipe_document(deep_merge(copy.deepcopy(base), fragment), file="r.yaml")
    except RecipeError as exc:
        return [(i.path, i.message) for i in exc.issues if i.message in messages]
    return []


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        # Power telemetry is planned (srt_planner.power): no longer refused.
        ({"telemetry": {"enabled": True, "cpu_power": {"enabled": True}}}, []),
        ({"telemetry": {"cpu_power_exporter": {"port": 9500}}}, []),
        ({"telemetry": {"storage_subdir": "watts"}}, []),
        # Dynamo from source is installed (srt_planner.dynamo_install).
        ({"dynamo": {"top_of_tree": True}}, []),
        (
            {
                "dynamo": {
                    "source": {"git": "https://github.com/ai-dynamo/dynamo", "rev": "v1.4.2"}
                    | {"patches": ["fix.patch"]}
                }
            },
            [],
        ),
        (
            # Without the sidecar mode nothing reads it (the TRT-LLM sidecar does:
            # test_sidecar_rules.py).
            {"dynamo": {"sidecar_context_length": 8192}},
            [
                (
                    "$.dynamo.sidecar_context_length",
                    "sidecar_context_length is passed only to the TRT-LLM sidecar "
                    "(--context-length); the sglang and vllm sidecars read the context length "
                    "from their engine and without the sidecar mode nothing reads it; remove "
                    "sidecar_context_length, or use it with engine trtllm and "
                    "roles.agg.sidecar: true",
                )
            ],
        ),
        (
            {"observability": {"tachometer": {"binary_path": "/opt/tachometer"}}},
            [
                (
                    "$.observability.tachometer.binary_path",
                    "srt scrapes with its own srt-telemetry collector and runs no tachometer "
                    "binary; remove binary_path",
                )
            ],
        ),
        # Model staging is planned (srt_planner.staging) for a model folder, not an hf: id.
        ({"model": {"stage_dir": "/raid/models"}}, []),
        (
            {"model": {"path": "hf:Org/m", "stage_dir": "/raid/models"}},
            [
                (
                    "$.model.stage_dir",
                    "an hf: model has no folder to stage (the workers download it by id); "
                    "remove stage_dir, or point model.path at a downloaded model folder",
                )
            ],
        ),
        (
            {
                "engine": None,
                "roles": {"agg": {"engine": {"type": "mocker", "speedup_ratio": 3.0}}},
            },
            [("$.roles.agg.engine.speedup_ratio", _ROLE_MOCKER)],
        ),
        (
            {
                "engine": None,
                "roles": {
                    "agg": {"engine": {"type": "mocker", "max_num_seqs": 8, "block_size": 16}}
                },
            },
            [
                ("$.roles.agg.engine.max_num_seqs", _ROLE_MOCKER),
                ("$.roles.agg.engine.block_size", _ROLE_MOCKER),
            ],
        ),
        (
            _ROLE_TRTLLM
            | {
                "roles": {
                    "agg": {
                        "engine": {
                            "type": "trtllm",
                            "publish_metrics": False,
                            "publish_events_and_metrics": True,
                        }
                    }
                }
            },
            [
                ("$.roles.agg.engine.publish_metrics", _ROLE_PUBLISH),
                ("$.roles.agg.engine.publish_events_and_metrics", _ROLE_PUBLISH),
            ],
        ),
        (
            {
                "observability": {
                    "tachometer": {"process_exporter": {"container_image": "pe:2", "port": 9256}}
                }
            },
            [
                (
                    "$.observability.tachometer.process_exporter.container_image",
                    "the process exporter runs on the bare host, never in a container (the "
                    "image would be ignored); set container_image: '' and binary: to the "
                    "process-exporter path on the nodes",
                )
            ],
        ),
        (
            {"benchmark": {"sweep": {"mode": "grid", "parameters": {"isl": [128, 256]}}}},
            [
                ("$.benchmark.sweep.mode", _BENCH_SWEEP),
                ("$.benchmark.sweep.parameters", _BENCH_SWEEP),
            ],
        ),
        (
            {"enable_config_dump": False},
            [
                (
                    "$.enable_config_dump",
                    "turning the engine config dump off is not applied by srt yet (Dynamo "
                    "workers always write <node>_config.json); remove enable_config_dump",
                )
            ],
        ),
    ],
)
def test_a_field_with_an_effect_is_refused(
    fragment: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert _refusals(fragment) == expected


@pytest.mark.parametrize(
    "fragment",
    [
        {"telemetry": {"enabled": False}},
        {"telemetry": {"collect_interval_ms": 1000, "storage_subdir": "power"}},
        {"dynamo": {"top_of_tree": False}},
        {"dynamo": {"source": {"pypi": "1.1.0"}}},
        {"observability": {"tachometer": {"binary_path": "tachometer-scraper"}}},
        {"enable_config_dump": True},
        {"benchmark": {"sweep": {"mode": "zip", "parameters": {}}}},
        {
            "observability": {
                "tachometer": {
                    "process_exporter": {
                        "container_image": "",
                        "binary": "process-exporter",
                        "port": 9256,
                    }
                }
            }
        },
    ],
)
def test_a_field_spelling_its_default_loads(fragment: dict[str, Any]) -> None:
    jobs = load_recipe_document(deep_merge(copy.deepcopy(_MOCKER), fragment), file="r.yaml")
    assert len(jobs) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "telemetry: {snapshotter: true}\n",
            [
                (
                    "$.telemetry",
                    "cluster-level telemetry settings are not read by srt; remove telemetry "
                    "from srtslurm.yaml and configure GPU scraping with default_gpu_exporter",
                )
            ],
        ),
        (
            "git_http_version: HTTP/1.1\n",
            [
                (
                    "$.git_http_version",
                    "srt does not pass an HTTP version to git yet; remove git_http_version and "
                    "set it in git's own configuration (git config --global http.version "
                    "HTTP/1.1)",
                )
            ],
        ),
        (
            "network_interface: ib0\n",
            [
                (
                    "$.network_interface",
                    "srt reaches each node at the address of its hostname and does not select "
                    "an interface yet; remove network_interface",
                )
            ],
        ),
        (
            "default_gpu_exporter:\n"
            "  {container_image: img, port: 9400, power_profile: amd-device-metrics}\n",
            [
                (
                    "$.default_gpu_exporter.power_profile",
                    "only the dcgm power profile is supported; remove power_profile (power "
                    "telemetry is not planned by srt yet)",
                )
            ],
        ),
    ],
)
def test_a_cluster_key_with_an_effect_is_refused(
    text: str, expected: list[tuple[str, str]]
) -> None:
    with pytest.raises(ClusterConfigError) as info:
        parse_cluster_config("default_account: a\n" + text, file="srtslurm.yaml")
    assert [(i.file, i.path, i.message) for i in info.value.issues] == [
        ("srtslurm.yaml", path, message) for path, message in expected
    ]


@pytest.mark.parametrize(
    "text",
    [
        "telemetry: {}\n",
        "default_gpu_exporter: {container_image: img, port: 9400, power_profile: dcgm}\n",
        "cloud: {region: us-east-1}\n",
    ],
)
def test_a_cluster_key_without_an_effect_loads(text: str) -> None:
    parse_cluster_config("default_account: a\n" + text, file="srtslurm.yaml")


def test_a_role_specific_trtllm_with_default_publish_flags_is_not_refused_for_them() -> None:
    doc = deep_merge(copy.deepcopy(_MOCKER), _ROLE_TRTLLM)
    assert _refusals({"roles": {"agg": {"engine": {"type": "trtllm"}}}}, base=doc) == []

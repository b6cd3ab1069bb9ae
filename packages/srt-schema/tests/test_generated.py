"""The committed structs are exactly what the generator makes from the committed schemas."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import msgspec
import pytest

from srt_schema import cluster, recipe

PKG = Path(__file__).resolve().parents[1]


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "generate_structs", PKG / "scripts" / "generate_structs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_structs_match_the_schema() -> None:
    for path, text in _generator().build().items():
        assert path.read_text() == text, f"{path.name} is stale: run `make generate`"


def test_every_schema_definition_has_a_struct() -> None:
    schema = json.loads((PKG / "schema" / "recipe.schema.json").read_text())
    assert set(schema["$defs"]) == set(recipe.__all__)
    cschema = json.loads((PKG / "schema" / "cluster.schema.json").read_text())
    assert set(cschema["$defs"]) | {"ClusterConfig"} == set(cluster.__all__)


def test_wire_names_are_kept() -> None:
    status = msgspec.convert({"logging-stream-interval": 5}, recipe.ReportingStatusConfig)
    assert status.logging_stream_interval == 5.0
    assert msgspec.to_builtins(status)["logging-stream-interval"] == 5.0
    with pytest.raises(msgspec.ValidationError, match="logging_stream_interval"):
        msgspec.convert({"logging_stream_interval": 5}, recipe.ReportingStatusConfig)


def test_engine_is_a_string_or_a_tagged_mapping() -> None:
    role = msgspec.convert({"engine": "vllm"}, recipe.RoleConfig)
    assert role.engine == "vllm"
    role = msgspec.convert({"engine": {"type": "mocker", "speedup_ratio": 5}}, recipe.RoleConfig)
    assert isinstance(role.engine, recipe.MockerBackend)
    assert role.engine.speedup_ratio == 5.0
    with pytest.raises(msgspec.ValidationError, match="Invalid value 'nope'"):
        msgspec.convert({"engine": {"type": "nope"}}, recipe.RoleConfig)


def test_restart_is_a_string_or_a_mapping() -> None:
    assert msgspec.convert({}, recipe.RoleConfig).restart == "never"
    role = msgspec.convert({"restart": {"policy": "always"}}, recipe.RoleConfig)
    assert role.restart == recipe.RestartPolicy(policy="always")


def test_structs_are_frozen_and_strict() -> None:
    hc = recipe.HealthCheckConfig()
    with pytest.raises(AttributeError):
        hc.max_attempts = 3  # type: ignore[misc]
    with pytest.raises(msgspec.ValidationError, match="unknown field `nope`"):
        msgspec.convert({"nope": 1}, recipe.HealthCheckConfig)


def test_override_base_fields_are_all_optional() -> None:
    base = msgspec.convert({}, recipe.RecipeBase)
    assert base.name is None and base.model is None


def test_cluster_extensions_have_defaults() -> None:
    config = msgspec.convert({}, cluster.ClusterConfig)
    assert (config.container_runtime, config.runtime_python, config.launcher) == (
        "pyxis",
        None,
        "slurm",
    )

"""The migration refuses contradictions (naming ``$.path`` and the fix) and carries the keys
schema 2 renamed (docs/recipes.md#migration)."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import yaml

from srt_schema import RecipeError, load_recipe_document
from srt_schema.errors import MigrationError
from srt_schema.migrate import MigrationResult, migrate_text


def migrate(text: str) -> MigrationResult:
    return migrate_text(textwrap.dedent(text).lstrip("\n"), file="r.yaml")


def refusal(text: str) -> str:
    with pytest.raises(MigrationError) as caught:
        migrate(text)
    assert str(caught.value).startswith("r.yaml: $.")
    return caught.value.message


def loaded(result: MigrationResult) -> Any:
    return yaml.safe_load(result.text)


# ----------------------------------------------------------------------------- dynamo source


@pytest.mark.parametrize(
    ("dynamo", "path", "fix"),
    [
        ({"hash": "341f9ac", "top_of_tree": True}, "$.dynamo.hash", "delete top_of_tree"),
        ({"wheel": "1.5.0.dev1", "top_of_tree": True}, "$.dynamo.wheel", "delete top_of_tree"),
        ({"hash": "341f9ac", "wheel": "1.5.0.dev1"}, "$.dynamo.wheel", "delete wheel"),
        ({"cargo_patches": ["a=b"]}, "$.dynamo.cargo_patches", "set dynamo.hash"),
        (
            {"wheel": "1.5.0.dev1", "cargo_patches": ["a=b"]},
            "$.dynamo.cargo_patches",
            "set dynamo.hash",
        ),
        ({"version": "0.8.0", "cargo_patches": ["a=b"]}, "$.dynamo.cargo_patches", "delete"),
        (
            {"wheel": "ai_dynamo-1.2.0-py3-none-any.whl"},
            "$.dynamo.wheel",
            "write the version",
        ),
        ({"source": {"pypi": "1.0.0"}, "hash": "341f9ac"}, "$.dynamo.hash", "keep one"),
    ],
)
def test_two_dynamo_sources_are_refused_with_the_path_and_a_fix(
    dynamo: dict[str, Any], path: str, fix: str
) -> None:
    message = refusal(yaml.safe_dump({"dynamo": dynamo}))
    assert message.startswith(f"{path}: ")
    assert fix in message


def test_the_bare_wheel_message_says_what_v1_meant() -> None:
    message = refusal("dynamo:\n  wheel: ai_dynamo-1.2.0-py3-none-any.whl\n")
    assert message == (
        "$.dynamo.wheel: dynamo.wheel 'ai_dynamo-1.2.0-py3-none-any.whl' is a bare file name; v1 "
        "read dynamo.wheel as a nightly version (the reference installs "
        "ai_dynamo-<version>-py3-none-any.whl), so write the version (for example wheel: "
        "1.2.0.dev20260426), or give the wheel file's path (absolute, or ./<name>.whl in the "
        "configs folder)"
    )


def test_a_wheel_path_and_a_wheel_version_still_migrate() -> None:
    assert loaded(migrate("dynamo:\n  wheel: /w/ai_dynamo-1.2.0-py3-none-any.whl\n"))["dynamo"] == {
        "source": {"wheel": "/w/ai_dynamo-1.2.0-py3-none-any.whl"}
    }
    assert loaded(migrate("dynamo:\n  wheel: 1.2.0.dev20260426\n"))["dynamo"] == {
        "source": {"wheel": "1.2.0.dev20260426"}
    }


def test_a_matching_source_and_legacy_key_are_not_a_contradiction() -> None:
    result = migrate("dynamo:\n  source: {rev: abc1234}\n  hash: abc1234\n")
    assert loaded(result)["dynamo"] == {"source": {"rev": "abc1234"}}


def test_override_patches_over_the_base_hash_become_source_patches() -> None:
    result = migrate(
        """
        base:
          dynamo: {hash: abc1234}
        override_patched:
          dynamo: {cargo_patches: ["a=b"]}
        """
    )
    assert loaded(result)["override_patched"]["dynamo"] == {"source": {"patches": ["a=b"]}}


def test_every_contradiction_of_a_file_is_listed_with_its_section() -> None:
    message = refusal(
        """
        base:
          dynamo: {hash: abc1234, top_of_tree: true}
        override_x:
          frontend: {dedicated_node: true, orchestrator_placement: first_decode}
        """
    )
    assert message.startswith("$.base.dynamo.hash: ")
    assert "; $.override_x.frontend.dedicated_node: " in message


# ----------------------------------------------------------------------------- placement


@pytest.mark.parametrize(
    ("block", "legacy", "path"),
    [
        (
            "frontend",
            {"orchestrator_placement": "first_decode", "dedicated_node": True},
            "$.frontend.dedicated_node",
        ),
        (
            "benchmark",
            {"client_placement": "last_decode", "client_dedicated_node": True},
            "$.benchmark.client_dedicated_node",
        ),
    ],
)
def test_dedicated_next_to_another_location_is_refused(
    block: str, legacy: dict[str, Any], path: str
) -> None:
    message = refusal(yaml.safe_dump({block: legacy}))
    where = next(value for value in legacy.values() if isinstance(value, str))
    assert message.startswith(f"{path}: ")
    assert f"asks for {where}; keep one: delete" in message


# ----------------------------------------------------------------------------- roles


def test_an_explicit_null_role_key_is_unset() -> None:
    result = migrate(
        """
        backend: {type: sglang}
        resources:
          gpus_per_node: 4
          prefill_nodes: null
          decode_nodes: null
          agg_nodes: 1
          agg_workers: 1
        """
    )
    assert loaded(result)["roles"] == {"agg": {"nodes": 1, "workers": 1}}
    assert "removed resources.prefill_nodes: null (null means unset)" in result.notes


def test_an_override_nulling_a_role_deletes_the_base_role() -> None:
    result = migrate(
        """
        base:
          resources: {prefill_nodes: 1, decode_nodes: 1, prefill_workers: 1, decode_workers: 1}
        override_agg:
          resources: {prefill_nodes: null, prefill_workers: null, decode_nodes: null,
                      decode_workers: null, agg_nodes: 1, agg_workers: 1}
        """
    )
    roles = loaded(result)["override_agg"]["roles"]
    assert roles == {"prefill": None, "decode": None, "agg": {"nodes": 1, "workers": 1}}


def test_per_phase_config_of_an_aggregated_recipe_is_dropped_as_v1_ignored_it() -> None:
    result = migrate(
        """
        backend:
          type: mocker
          mocker_config:
            prefill: {max-num-seqs: 8}
            decode: {max-num-seqs: 64}
            aggregated: {max-num-seqs: 128}
          prefill_environment: {A: "1"}
        resources: {agg_nodes: 1, agg_workers: 1}
        """
    )
    document = loaded(result)
    assert document["roles"] == {"agg": {"nodes": 1, "workers": 1, "args": {"max-num-seqs": 128}}}
    assert (
        "removed backend.mocker_config.prefill (an aggregated recipe runs no prefill worker; "
        "v1 ignored it)"
    ) in result.notes
    assert (
        "removed backend.prefill_environment (an aggregated recipe runs no prefill worker; "
        "v1 ignored it)"
    ) in result.notes


def test_aggregated_config_of_a_disaggregated_recipe_is_dropped() -> None:
    result = migrate(
        """
        backend:
          sglang_config:
            prefill: {a: 1}
            decode: {b: 2}
            aggregated: {c: 3}
        resources: {prefill_nodes: 1, decode_nodes: 1}
        """
    )
    assert set(loaded(result)["roles"]) == {"prefill", "decode"}


# ----------------------------------------------------------------------------- retired keys


def test_telemetry_default_frequency_seconds_become_milliseconds() -> None:
    result = migrate("telemetry:\n  enabled: true\n  default_frequency: 0.5  # s\n")
    assert result.text == "schema: 2\ntelemetry:\n  enabled: true\n  collect_interval_ms: 500 # s\n"
    assert result.notes[0] == (
        "telemetry.default_frequency 0.5 (a period in seconds) -> collect_interval_ms: 500"
    )


def test_tachometer_default_frequency_hz_becomes_milliseconds() -> None:
    result = migrate("observability:\n  tachometer:\n    default_frequency: 5.0\n")
    assert loaded(result)["observability"] == {"tachometer": {"collect_interval_ms": 200}}


def test_a_retired_key_in_a_schema_2_file_is_migrated() -> None:
    result = migrate(
        """
        schema: 2
        engine:
          type: vllm
          set_cuda_visible_devices: true
        """
    )
    assert loaded(result)["engine"] == {"type": "vllm", "set_visible_devices": True}
    assert result.notes == ("engine.set_cuda_visible_devices -> engine.set_visible_devices: true",)


def test_v1_set_cuda_visible_devices_becomes_set_visible_devices() -> None:
    result = migrate("backend:\n  type: vllm\n  set_cuda_visible_devices: true\n")
    assert loaded(result)["engine"] == {"type": "vllm", "set_visible_devices": True}


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (
            "telemetry: {default_frequency: 2, collect_interval_ms: 1000}\n",
            "$.telemetry.default_frequency",
        ),
        ("telemetry: {default_frequency: 0}\n", "$.telemetry.default_frequency"),
        (
            "observability: {tachometer: {default_frequency: '{hz}'}}\n",
            "$.observability.tachometer.default_frequency",
        ),
        (
            "schema: 2\nengine: {type: vllm, set_cuda_visible_devices: true, "
            "set_visible_devices: false}\n",
            "$.engine.set_cuda_visible_devices",
        ),
        (
            "benchmark: {type: manual, export_node_metrics: true}\n",
            "$.benchmark.export_node_metrics",
        ),
    ],
)
def test_a_retired_key_that_cannot_be_carried_is_refused(text: str, path: str) -> None:
    assert refusal(text).startswith(f"{path}: ")


def test_export_node_metrics_false_is_removed_with_a_note() -> None:
    result = migrate("benchmark:\n  type: manual\n  export_node_metrics: false\n")
    assert "export_node_metrics" not in loaded(result)["benchmark"]
    assert "removed benchmark.export_node_metrics: false (nothing to export)" in result.notes


# ----------------------------------------------------------------------------- the loader


@pytest.mark.parametrize(
    ("block", "path", "message"),
    [
        (
            {"telemetry": {"default_frequency": 1.0}},
            "$.telemetry.default_frequency",
            "default_frequency: 1.0 is retired: it was a period in seconds; write "
            "collect_interval_ms in milliseconds (1.0 -> 1000), or run `srtctl migrate` on the "
            "file",
        ),
        (
            {"observability": {"tachometer": {"default_frequency": 5}}},
            "$.observability.tachometer.default_frequency",
            "default_frequency: 5 is retired: it was a rate in Hz; write collect_interval_ms in "
            "milliseconds (1000 / Hz: 5.0 -> 200), or run `srtctl migrate` on the file",
        ),
        (
            {"engine": {"type": "vllm", "set_cuda_visible_devices": True}},
            "$.engine.set_cuda_visible_devices",
            "set_cuda_visible_devices: true is retired: write set_visible_devices (the same "
            "switch), or run `srtctl migrate` on the file",
        ),
        (
            {"benchmark": {"type": "manual", "export_node_metrics": False}},
            "$.benchmark.export_node_metrics",
            "export_node_metrics: false is retired: schema 2 has no node-metrics export and srt "
            "does not write one; delete the key",
        ),
    ],
)
def test_the_loader_names_a_retired_key_and_what_to_write(
    block: dict[str, Any], path: str, message: str
) -> None:
    doc = {
        "schema": 2,
        "name": "x",
        "model": {"path": "/m", "container": "c", "precision": "bf16"},
        "resources": {"gpus_per_node": 4},
        "engine": "sglang",
        "roles": {"agg": {"nodes": 1, "workers": 1}},
        **block,
    }
    with pytest.raises(RecipeError) as caught:
        load_recipe_document(doc, file="r.yaml")
    assert [(i.path, i.message) for i in caught.value.issues] == [(path, message)]


def test_a_wheel_url_is_refused_by_the_loader_since_nothing_downloads_it() -> None:
    url = "https://example.invalid/ai_dynamo-1.2.0-py3-none-any.whl"
    doc = {
        "schema": 2,
        "name": "x",
        "model": {"path": "/m", "container": "c", "precision": "bf16"},
        "resources": {"gpus_per_node": 4},
        "engine": "sglang",
        "roles": {"agg": {"nodes": 1, "workers": 1}},
        "dynamo": {"source": {"wheel": url}},
    }
    with pytest.raises(RecipeError) as caught:
        load_recipe_document(doc, file="r.yaml")
    assert [(i.path, i.message) for i in caught.value.issues] == [
        (
            "$.dynamo.source.wheel",
            f"{url!r} is a URL, but source.wheel is a nightly version or a path to a wheel file "
            "(absolute, or relative to the configs folder) and nothing is downloaded; download "
            "the wheel and give its path, or write its version",
        )
    ]

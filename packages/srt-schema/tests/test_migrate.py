"""Unit tests of the v1 -> v2 migration, one transformation rule at a time
(docs/recipes.md#migration)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest
import yaml

from srt_schema.errors import MigrationError
from srt_schema.migrate import MigrationResult, migrate_text


def migrate(text: str) -> MigrationResult:
    return migrate_text(textwrap.dedent(text).lstrip("\n"), file="r.yaml")


def loaded(result: MigrationResult) -> Any:
    return yaml.safe_load(result.text)


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# ----------------------------------------------------------------------------- version (rule 1)


def test_a_file_without_schema_is_version_1_and_gets_schema_2_as_first_key() -> None:
    result = migrate(
        """
        name: x
        backend:
          type: vllm
        """
    )
    assert result.text == "schema: 2\nname: x\nengine: vllm\n"
    assert (result.changed, result.from_version, result.to_version) == (True, 1, 2)
    assert result.notes == ("backend -> engine: vllm", "set schema: 2")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("true", "r.yaml: schema must be an integer version, got True; write schema: 1 or 2"),
        ('"2"', "r.yaml: schema must be an integer version, got '2'; write schema: 1 or 2"),
        ("1.5", "r.yaml: schema must be an integer version, got 1.5; write schema: 1 or 2"),
        ("3", "r.yaml: schema 3 is not supported; known versions: [1, 2]"),
    ],
)
def test_a_schema_that_is_not_a_known_integer_is_refused(value: str, message: str) -> None:
    with pytest.raises(MigrationError) as caught:
        migrate(f"schema: {value}\nname: x\n")
    assert str(caught.value) == message


def test_an_explicit_schema_1_is_rewritten_in_place() -> None:
    result = migrate("name: x\nschema: 1\n")
    assert result.text == "name: x\nschema: 2\n"
    assert result.from_version == 1


def test_a_current_file_is_returned_unchanged() -> None:
    text = dedent(
        """
        schema: 2   # current
        name: x
        engine: {type: vllm}
        frontend:
          type: sglang
        roles:
          agg: {nodes: 1, workers: 1}
        """
    )
    result = migrate_text(text, file="r.yaml")
    assert result == MigrationResult(
        text=text, changed=False, from_version=2, to_version=2, notes=("already current",)
    )


def test_schema_2_with_v1_keys_is_migrated_without_the_schema_1_frontend_rename() -> None:
    result = migrate(
        """
        schema: 2
        name: x
        frontend:
          type: sglang
        resources:
          agg_nodes: 1
        """
    )
    document = loaded(result)
    assert document["frontend"] == {"type": "sglang"}
    assert document["roles"] == {"agg": {"nodes": 1}}
    assert result.from_version == 2
    assert "set schema: 2" not in result.notes


def test_schema_2_in_the_v1_layout_renames_sglang_when_only_the_router_fits() -> None:
    result = migrate(
        """
        schema: 2
        frontend:
          type: sglang
        resources:
          agg_nodes: 1
          agg_workers: 2
        """
    )
    assert loaded(result)["frontend"] == {"type": "sglang-router"}
    assert result.notes[1] == (
        "frontend.type: sglang -> sglang-router (the file uses the v1 layout, where sglang "
        "named the router; the direct sglang frontend serves a single aggregate worker)"
    )


# ----------------------------------------------------------------------------- parse errors


def test_a_duplicate_key_names_the_key_and_its_line() -> None:
    with pytest.raises(MigrationError) as caught:
        migrate(
            """
            name: x
            resources:
              agg_nodes: 1
              agg_nodes: 2
            """
        )
    assert caught.value.message == (
        "duplicate key 'agg_nodes' at line 4 (the mapping starts at line 3); "
        "keep one of the two entries"
    )
    assert "duplicate key" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "YAML file is empty; nothing to migrate"),
        ("- a\n- b\n", "top-level YAML must be a mapping, got CommentedSeq"),
        ("a: [1\n", "YAML does not parse: while parsing a flow sequence (line 2, column 1)"),
    ],
)
def test_a_file_that_is_not_a_recipe_mapping_is_refused(text: str, message: str) -> None:
    with pytest.raises(MigrationError) as caught:
        migrate_text(text, file="r.yaml")
    assert caught.value.message == message
    assert caught.value.file == "r.yaml"


def test_missing_ruamel_names_the_extra_to_install() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["ruamel"] = None
        sys.modules["ruamel.yaml"] = None
        from srt_schema.errors import MigrationError
        from srt_schema.migrate import migrate_text
        try:
            migrate_text("name: x\\n", file="r.yaml")
        except MigrationError as exc:
            print(exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout == (
        "r.yaml: migration needs ruamel.yaml: pip install 'srt-schema[migrate]'\n"
    )


# ----------------------------------------------------------------------------- frontend (rule 2)


def test_schema_1_sglang_frontend_becomes_the_router() -> None:
    result = migrate(
        """
        name: x
        frontend:
          type: sglang  # the gateway
        """
    )
    assert result.text == dedent(
        """
        schema: 2
        name: x
        frontend:
          type: sglang-router  # the gateway
        """
    )
    assert result.notes == ("frontend.type: sglang -> sglang-router (the router)", "set schema: 2")


# ----------------------------------------------------------------------------- roles


V1_DISAGG = """
# A disaggregated v1 recipe.

name: demo  # job name

resources:
  gpu_type: h100
  gpus_per_node: 8
  # one prefill node
  prefill_nodes: 1
  prefill_workers: 2  # two workers
  decode_nodes: 2
  decode_workers: 2

backend:
  type: vllm
  connector: null
  # prefill env
  prefill_environment:
    A: "1"
  vllm_config:
    prefill:
      tensor-parallel-size: 4
    decode:
      tensor-parallel-size: 8

benchmark:
  type: gsm8k
  isl: 1024  # unused by gsm8k
  num_examples: 100
"""

V2_DISAGG = """
# A disaggregated v1 recipe.

schema: 2
name: demo  # job name

resources:
  gpu_type: h100
  gpus_per_node: 8

engine:
  type: vllm
  connector: null
roles:
  prefill:
    # one prefill node
    nodes: 1
    workers: 2        # two workers
    # prefill env
    env:
      A: "1"
    args:
      tensor-parallel-size: 4
  decode:
    nodes: 2
    workers: 2
    args:
      tensor-parallel-size: 8

benchmark:
  type: gsm8k
  num_examples: 100
"""


def test_roles_fold_with_their_comments_exactly() -> None:
    result = migrate(V1_DISAGG)
    assert result.text == dedent(V2_DISAGG)
    assert result.notes == (
        "folded prefill fields into roles.prefill",
        "folded decode fields into roles.decode",
        "removed benchmark.isl (unused by type gsm8k)",
        "backend -> engine: {type: vllm, connector}",
        "set schema: 2",
    )


def test_every_legacy_role_key_has_its_role_field() -> None:
    result = migrate(
        """
        resources:
          agg_nodes: 2
          agg_workers: 4
          gpus_per_agg: 2
          agg_critical: false
        backend:
          type: trtllm
          aggregated_environment: {X: "1"}
          aggregated_extra_args: ["--a"]
          trtllm_config:
            aggregated: {tp: 2}
        """
    )
    assert loaded(result)["roles"] == {
        "agg": {
            "nodes": 2,
            "workers": 4,
            "gpus": 2,
            "critical": False,
            "env": {"X": "1"},
            "extra_args": ["--a"],
            "args": {"tp": 2},
        }
    }
    assert loaded(result)["engine"] == "trtllm"


def test_roles_go_right_after_the_engine() -> None:
    result = migrate(
        """
        name: x
        resources: {agg_nodes: 1}
        backend: {type: sglang}
        benchmark: {type: manual}
        """
    )
    assert list(loaded(result)) == ["schema", "name", "resources", "engine", "roles", "benchmark"]


def test_an_existing_role_field_wins_over_the_legacy_key() -> None:
    result = migrate(
        """
        resources:
          agg_nodes: 2
        roles:
          agg:
            nodes: 1
        """
    )
    assert loaded(result)["roles"] == {"agg": {"nodes": 1}}
    assert "roles.agg.nodes already set; kept it and dropped legacy resources.agg_nodes" in (
        result.notes
    )


def test_the_engine_config_key_follows_the_base_type_and_empty_configs_go() -> None:
    result = migrate(
        """
        base:
          backend:
            type: vllm
          resources: {agg_nodes: 1}
        override_a:
          backend:
            vllm_config:
              aggregated: {max-model-len: 10}
        """
    )
    document = loaded(result)
    assert document["override_a"] == {"roles": {"agg": {"args": {"max-model-len": 10}}}}
    assert "override_a: dropped the empty backend block (the base's engine applies)" in (
        result.notes
    )


# ----------------------------------------------------------------------------- colocate


def test_decode_nodes_zero_becomes_colocate_and_gpus_are_materialized() -> None:
    result = migrate(
        """
        resources:
          gpus_per_node: 8
          prefill_nodes: 1
          prefill_workers: 2
          decode_nodes: 0
          decode_workers: 4
        """
    )
    assert loaded(result)["roles"] == {
        "prefill": {"nodes": 1, "workers": 2, "gpus": 4},
        "decode": {"nodes": "colocate", "workers": 4, "gpus": 4},
    }
    assert result.notes[2:5] == (
        "roles.decode.nodes: 0 -> colocate (decode shares the prefill nodes)",
        "materialized roles.prefill.gpus: 4 (prefill nodes 1 x gpus_per_node 8 // workers 2)",
        "materialized roles.decode.gpus: 4 (same as roles.prefill.gpus)",
    )


def test_colocate_without_gpus_per_node_asks_for_gpus_by_hand() -> None:
    result = migrate(
        """
        resources:
          prefill_nodes: 1
          prefill_workers: 1
          decode_nodes: 0
          decode_workers: 1
        """
    )
    assert loaded(result)["roles"]["decode"] == {"nodes": "colocate", "workers": 1}
    assert (
        "roles.decode.nodes: colocate needs explicit GPUs per worker; "
        "set roles.prefill.gpus and roles.decode.gpus by hand"
    ) in result.notes


def test_colocate_keeps_explicit_gpus() -> None:
    result = migrate(
        """
        resources:
          gpus_per_node: 8
          prefill_nodes: 1
          prefill_workers: 3
          decode_nodes: 0
          decode_workers: 2
          gpus_per_prefill: 1
          gpus_per_decode: 2
        """
    )
    roles = loaded(result)["roles"]
    assert (roles["prefill"]["gpus"], roles["decode"]["gpus"]) == (1, 2)
    assert not any(note.startswith("materialized") for note in result.notes)


# ----------------------------------------------------------------------------- placement


@pytest.mark.parametrize(
    ("block", "legacy", "node"),
    [
        ("frontend", {"dedicated_node": True}, "dedicated"),
        ("frontend", {"orchestrator_placement": "first_decode"}, "first_decode"),
        ("frontend", {"orchestrator_placement": "head", "dedicated_node": True}, "dedicated"),
        (
            "frontend",
            {"orchestrator_placement": "first_decode", "dedicated_node": False},
            "first_decode",
        ),
        ("frontend", {"dedicated_node": False}, "head"),
        ("benchmark", {"client_placement": "last_decode"}, "last_decode"),
        ("benchmark", {"client_dedicated_node": True}, "dedicated"),
    ],
)
def test_placement_booleans_become_placement_node(
    block: str, legacy: dict[str, Any], node: str
) -> None:
    text = yaml.safe_dump(
        {"schema": 2, block: {"type": "dynamo" if block == "frontend" else "manual", **legacy}}
    )
    result = migrate_text(text, file="r.yaml")
    assert loaded(result)[block]["placement"] == {"node": node}
    keys = " / ".join(f"{block}.{key}" for key in legacy)
    assert result.notes == (f"{keys} -> {block}.placement.node: {node}",)


# ----------------------------------------------------------------------------- infra


def test_dedicated_infra_becomes_etcd_and_nats_services_when_nats_is_used() -> None:
    result = migrate(
        """
        name: x
        # discovery on its own node
        infra:
          etcd_nats_dedicated_node: true
        dynamo:
          request_plane: nats
        """
    )
    assert result.text == dedent(
        """
        schema: 2
        name: x
        # discovery on its own node
        services:
          - name: etcd
            type: etcd
            placement:
              node: dedicated
          - name: nats
            type: nats
            placement:
              node: dedicated
        dynamo:
          request_plane: nats
        """
    )
    assert result.notes == ("infra -> services: etcd, nats", "set schema: 2")


def test_dedicated_infra_without_nats_places_etcd_alone() -> None:
    result = migrate("infra:\n  etcd_nats_dedicated_node: true\n")
    assert loaded(result)["services"] == [
        {"name": "etcd", "type": "etcd", "placement": {"node": "dedicated"}}
    ]


def test_nats_payload_becomes_a_nats_service_option_and_false_is_dropped() -> None:
    result = migrate(
        """
        infra:
          etcd_nats_dedicated_node: false
          nats_max_payload_mb: 32
        """
    )
    assert loaded(result)["services"] == [
        {"name": "nats", "type": "nats", "options": {"max_payload_mb": 32}}
    ]


def test_infra_false_alone_is_dropped_with_a_note() -> None:
    result = migrate("name: x\ninfra:\n  etcd_nats_dedicated_node: false\n")
    assert result.text == "schema: 2\nname: x\n"
    assert result.notes[0] == "dropped infra.etcd_nats_dedicated_node: false (the default)"


def test_infra_under_a_static_frontend_is_dropped_with_notes() -> None:
    result = migrate(
        """
        frontend:
          type: sglang
        infra:
          etcd_nats_dedicated_node: true
          nats_max_payload_mb: 8
        """
    )
    assert "infra" not in loaded(result)
    assert "services" not in loaded(result)
    assert result.notes[1:3] == (
        "dropped infra.nats_max_payload_mb (frontend.type sglang starts no NATS)",
        "dropped infra.etcd_nats_dedicated_node: true (frontend.type sglang starts no etcd/NATS, "
        "so no node is reserved now; use frontend.placement.node or "
        "benchmark.placement.node: dedicated to isolate a process)",
    )


def test_an_override_undoing_dedicated_infra_carries_the_whole_services_list() -> None:
    result = migrate(
        """
        base:
          infra:
            etcd_nats_dedicated_node: true
          services:
            - name: tool
              command: [run]
        override_shared:
          infra:
            etcd_nats_dedicated_node: false
        override_null:
          infra: null
        """
    )
    document = loaded(result)
    etcd_infra = {"name": "etcd", "type": "etcd", "placement": {"node": "infra"}}
    tool = {"name": "tool", "command": ["run"]}
    assert document["base"]["services"] == [
        tool,
        {"name": "etcd", "type": "etcd", "placement": {"node": "dedicated"}},
    ]
    assert document["override_shared"]["services"] == [tool, etcd_infra]
    assert document["override_null"]["services"] == [tool, etcd_infra]


def test_services_added_in_a_zip_section_are_one_literal_list() -> None:
    result = migrate(
        """
        base:
          name: b
        zip_override_g:
          name: [a, b]
          infra:
            etcd_nats_dedicated_node: [true]
        """
    )
    assert loaded(result)["zip_override_g"]["services"] == [
        [{"name": "etcd", "type": "etcd", "placement": {"node": "dedicated"}}]
    ]


# ----------------------------------------------------------------------------- dynamo source


def test_dynamo_version_becomes_a_pypi_source_after_install() -> None:
    result = migrate(
        """
        dynamo:
          version: 1.2.1  # release
          install: true
          request_plane: tcp
        """
    )
    assert result.text == dedent(
        """
        schema: 2
        dynamo:
          install: true
          source:         # release
            pypi: 1.2.1
          request_plane: tcp
        """
    )
    assert result.notes == ("dynamo.version -> dynamo.source.pypi: 1.2.1", "set schema: 2")


def test_dynamo_hash_wins_and_carries_cargo_patches() -> None:
    result = migrate(
        """
        dynamo:
          version: 0.8.0
          hash: 341f9ac
          cargo_patches: ["a=b"]
        """
    )
    assert loaded(result)["dynamo"] == {"source": {"rev": "341f9ac", "patches": ["a=b"]}}
    assert result.notes == (
        "dynamo.hash -> dynamo.source.rev: 341f9ac",
        "dropped dynamo.version (superseded by dynamo.source)",
        "set schema: 2",
    )


def test_dynamo_wheel_wins_over_version() -> None:
    result = migrate("dynamo:\n  version: 0.8.0\n  wheel: 1.5.0.dev1\n")
    assert loaded(result)["dynamo"] == {"source": {"wheel": "1.5.0.dev1"}}


def test_dynamo_top_of_tree_stays_and_drops_pins() -> None:
    result = migrate("dynamo:\n  top_of_tree: true\n  version: 0.8.0\n")
    assert loaded(result)["dynamo"] == {"top_of_tree": True}
    assert result.notes[0] == (
        "kept dynamo.top_of_tree: true and dropped dynamo.version (top_of_tree builds HEAD)"
    )


def test_an_existing_dynamo_source_wins() -> None:
    result = migrate("dynamo:\n  source: {pypi: 1.0.0}\n  version: 0.8.0\n")
    assert loaded(result)["dynamo"] == {"source": {"pypi": "1.0.0"}}
    assert result.notes[0] == "dynamo.source already set; kept it and dropped legacy dynamo.version"


def test_an_override_pin_replaces_the_base_pin() -> None:
    result = migrate(
        """
        base:
          dynamo: {version: 0.8.0}
        override_git:
          dynamo: {hash: abc1234}
        """
    )
    assert loaded(result)["override_git"]["dynamo"] == {"source": {"rev": "abc1234", "pypi": None}}


# ----------------------------------------------------------------------------- benchmark


def test_an_unregistered_benchmark_type_is_left_alone() -> None:
    result = migrate("benchmark:\n  type: agentic\n  isl: 5\n")
    assert loaded(result)["benchmark"] == {"type": "agentic", "isl": 5}
    assert result.notes[0] == "benchmark.type 'agentic' is not a registered type; left as is"


def test_unused_fields_of_the_default_manual_type_are_removed() -> None:
    result = migrate("benchmark:\n  isl: 5\n  concurrencies: [1]\n")
    assert loaded(result)["benchmark"] == {"concurrencies": [1]}
    assert result.notes[0] == "removed benchmark.isl (unused by type manual)"


def test_quoted_concurrencies_become_integers() -> None:
    result = migrate('benchmark:\n  type: sa-bench\n  concurrencies: ["8", "16"]\n')
    assert loaded(result)["benchmark"]["concurrencies"] == [8, 16]


def test_zip_concurrency_strings_stay_strings() -> None:
    result = migrate(
        """
        base:
          benchmark: {type: sa-bench}
        zip_override_c:
          benchmark:
            concurrencies: ["8x16", "4"]
        """
    )
    assert loaded(result)["zip_override_c"]["benchmark"]["concurrencies"] == ["8x16", "4"]


# ----------------------------------------------------------------------------- mooncake


def test_mooncake_store_becomes_a_master_service_and_role_env() -> None:
    result = migrate(
        """
        resources: {prefill_nodes: 1, decode_nodes: 1}
        backend:
          type: vllm
          prefill_environment: {MC_X: "old", KEEP: "1"}
          mooncake_kv_store:
            container: mc:1
            master_extra_args: "--port 1"
            store_config: {size: 10}
            env: {MC_X: "new"}
        """
    )
    document = loaded(result)
    assert document["services"] == [
        {
            "name": "mooncake-master",
            "type": "mooncake-master",
            "container": "mc:1",
            "args": ["--port", "1"],
            "options": {"store_config": {"size": 10}},
        }
    ]
    assert document["roles"]["prefill"]["env"] == {"MC_X": "new", "KEEP": "1"}
    assert document["roles"]["decode"]["env"] == {"MC_X": "new"}
    assert document["engine"] == "vllm"


def test_mooncake_env_without_roles_is_left_in_place() -> None:
    result = migrate("backend:\n  mooncake_kv_store:\n    env: {A: '1'}\n")
    assert loaded(result)["engine"] == {"mooncake_kv_store": {"env": {"A": "1"}}}
    assert result.notes[0] == (
        "left backend.mooncake_kv_store in place: its env needs roles to carry it; "
        "declare roles and re-run srtctl migrate"
    )


# ----------------------------------------------------------------------------- engine


def test_a_zipped_engine_type_stays_a_zip_list() -> None:
    result = migrate(
        """
        base:
          backend: {type: sglang}
        zip_override_t:
          backend:
            type: [sglang, null]
        """
    )
    assert loaded(result)["zip_override_t"] == {"engine": ["sglang", None]}
    assert "zip_override_t: backend -> engine: [sglang, null]" in result.notes


def test_engine_type_goes_first_in_a_mapping() -> None:
    result = migrate("backend:\n  connector: nixl\n  type: vllm\n")
    assert result.text == "schema: 2\nengine:\n  type: vllm\n  connector: nixl\n"


def test_an_empty_backend_makes_the_implicit_engine_explicit() -> None:
    result = migrate("resources: {agg_nodes: 1}\nbackend:\n  aggregated_environment: {A: '1'}\n")
    assert loaded(result)["engine"] == "sglang"
    assert "engine: sglang (was the implicit default)" in result.notes


def test_kv_events_true_lands_on_existing_roles_only() -> None:
    result = migrate(
        """
        resources: {agg_nodes: 1}
        backend:
          type: sglang
          kv_events_config: true
        """
    )
    assert loaded(result)["roles"] == {"agg": {"nodes": 1, "kv_events": True}}


def test_kv_events_mapping_is_per_mode() -> None:
    result = migrate(
        """
        resources: {prefill_nodes: 1, decode_nodes: 1}
        backend:
          type: vllm
          kv_events_config:
            prefill: {topic: t}
            aggregated: true
        """
    )
    roles = loaded(result)["roles"]
    assert roles["prefill"]["kv_events"] == {"topic": "t"}
    assert "kv_events" not in roles["decode"]
    assert "dropped backend.kv_events_config.aggregated (no agg role)" in result.notes


def test_dynamo_sidecar_moves_onto_the_roles() -> None:
    result = migrate(
        """
        resources: {agg_nodes: 1}
        dynamo:
          sidecar: true
        """
    )
    assert loaded(result)["roles"] == {"agg": {"nodes": 1, "sidecar": True}}
    assert loaded(result)["dynamo"] == {}


def test_emptied_blocks_stay_as_empty_mappings() -> None:
    result = migrate("resources:\n  agg_nodes: 1\nfrontend:\n  dedicated_node: false\n")
    document = loaded(result)
    assert document["resources"] == {}
    assert document["frontend"] == {"placement": {"node": "head"}}


# ----------------------------------------------------------------------------- documents


def test_an_override_file_gets_schema_at_the_top_and_labelled_notes() -> None:
    result = migrate(
        """
        # overrides
        base:
          name: b
          resources: {agg_nodes: 1, agg_workers: 1}
        override_two:
          resources:
            agg_workers: 2
        """
    )
    assert result.text == dedent(
        """
        # overrides
        schema: 2
        base:
          name: b
          resources: {}
          roles:
            agg:
              nodes: 1
              workers: 1
        override_two:
          resources: {}
          roles:
            agg:
              workers: 2
        """
    )
    assert result.notes == (
        "base: folded agg fields into roles.agg",
        "override_two: folded agg fields into roles.agg",
        "set schema: 2",
    )


def test_a_lockfile_keeps_its_lock_section_byte_for_byte() -> None:
    lock = dedent(
        """
        lock:
          version: 2
          config:
            backend: {type: sglang}
            resources: {agg_nodes: 1}
          integrity: abc
        """
    )
    result = migrate_text("name: x\nbackend:\n  type: sglang\n" + lock, file="r.lock.yaml")
    assert result.text == "schema: 2\nname: x\nengine: sglang\n" + lock


def test_sweep_placeholders_move_with_their_keys() -> None:
    result = migrate(
        """
        resources:
          agg_workers: "{w}"
        sweep:
          w: [1, 2]
        """
    )
    assert loaded(result) == {
        "schema": 2,
        "resources": {},
        "roles": {"agg": {"workers": "{w}"}},
        "sweep": {"w": [1, 2]},
    }


@pytest.mark.parametrize(
    "text",
    [V1_DISAGG, "infra:\n  etcd_nats_dedicated_node: true\nfrontend: {type: sglang}\n"],
)
def test_migrating_twice_is_already_current(text: str) -> None:
    once = migrate(text)
    twice = migrate_text(once.text, file="r.yaml")
    assert (twice.text, twice.changed, twice.notes) == (once.text, False, ("already current",))

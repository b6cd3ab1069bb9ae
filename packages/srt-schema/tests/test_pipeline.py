"""The loading pipeline step by step: YAML, gate, overrides, sweeps, --set/--unset, cluster."""

from __future__ import annotations

from typing import Any

import pytest

from srt_schema import (
    ClusterConfigError,
    OverrideSyntaxError,
    RecipeError,
    load_recipe_document,
    load_recipe_text,
    parse_cluster_config,
    parse_set,
    parse_unset,
)
from srt_schema.clusterconfig import apply_cluster_defaults
from srt_schema.overrides import deep_merge
from srt_schema.setpaths import apply_overrides, parse_path
from srt_schema.yamlio import dump_yaml, parse_yaml


def _messages(exc: RecipeError) -> list[str]:
    return [issue.render() for issue in exc.issues]


# -- YAML ----------------------------------------------------------------------------------------
def test_duplicate_keys_are_refused_with_both_lines() -> None:
    with pytest.raises(RecipeError) as err:
        parse_yaml("a: 1\nb: 2\na: 3\n", file="r.yaml")
    assert _messages(err.value) == [
        "r.yaml: invalid YAML at line 3, column 1: duplicate key 'a' (first on line 1, again on "
        "line 3); keep one of them"
    ]


def test_empty_and_non_mapping_documents() -> None:
    with pytest.raises(RecipeError, match="the file is empty"):
        load_recipe_text("# nothing\n", file="r.yaml")
    with pytest.raises(RecipeError, match="the top level must be a mapping"):
        load_recipe_text("- a\n", file="r.yaml")


def test_dump_is_stable_and_round_trips() -> None:
    doc = {"b": [1, "x"], "a": {"c": "two\nlines"}}
    text = dump_yaml(doc)
    assert parse_yaml(text, file="d") == doc
    assert dump_yaml(parse_yaml(text, file="d")) == text


# -- schema gate ---------------------------------------------------------------------------------
def test_v1_recipe_points_at_migrate(make_recipe: Any) -> None:
    with pytest.raises(RecipeError) as err:
        load_recipe_document(make_recipe(schema=None), file="old.yaml")
    assert _messages(err.value) == [
        "old.yaml: recipe has no `schema:` key, which marks the pre-2.0 (v1) layout; schema 1 "
        "recipes no longer load. Declare `schema: 2` or run `srtctl migrate -f old.yaml "
        "--in-place` to rewrite it"
    ]


@pytest.mark.parametrize("value", ["2", True, 1, 3])
def test_unsupported_schema_versions(make_recipe: Any, value: object) -> None:
    with pytest.raises(RecipeError, match="is not supported; this srtctl loads schema 2 only"):
        load_recipe_document(make_recipe(schema=value), file="r.yaml")


def test_v1_keys_under_schema_2(make_recipe: Any) -> None:
    doc = make_recipe(backend={"type": "sglang"})
    doc["resources"]["prefill_nodes"] = 1
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="r.yaml")
    assert err.value.issues[0].path == "$.backend"
    assert "pre-2.0 (v1) layout: backend, resources.prefill_nodes" in str(err.value)


# -- override files ------------------------------------------------------------------------------
def test_deep_merge_rules() -> None:
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 1, "c": {"d": 1}}
    merged = deep_merge(base, {"a": {"y": [3]}, "b": None, "c": {"e": 2}, "f": 3})
    assert merged == {"a": {"x": 1, "y": [3]}, "c": {"d": 1, "e": 2}, "f": 3}
    assert base == {"a": {"x": 1, "y": [1, 2]}, "b": 1, "c": {"d": 1}}


def _override_file(make_recipe: Any) -> dict[str, Any]:
    base = make_recipe(schema=None)
    return {
        "schema": 2,
        "base": base,
        "override_b": {"roles": {"agg": {"workers": 2}}},
        "override_a": {"name": "explicit"},
        "zip_override_g": {"roles": {"agg": {"args": {"tp": [1, 2], "mem": [0.5]}}}},
    }


def test_override_variants_sorted_and_named(make_recipe: Any) -> None:
    jobs = load_recipe_document(_override_file(make_recipe), file="o.yaml")
    assert [(j.variant, j.name, j.label) for j in jobs] == [
        ("a", "explicit", "o.yaml:override_a"),
        ("b", "unit_b", "o.yaml:override_b"),
        ("g_0", "unit_g_0", "o.yaml:zip_override_g[0]"),
        ("g_1", "unit_g_1", "o.yaml:zip_override_g[1]"),
    ]
    assert jobs[1].recipe.roles["agg"].workers == 2
    assert jobs[3].recipe.roles["agg"].args == {"tp": 2, "mem": 0.5}


@pytest.mark.parametrize(
    ("selector", "variants"),
    [
        ("base", ["base"]),
        ("override_b", ["b"]),
        ("zip_override_g", ["g_0", "g_1"]),
        ("zip_override_g[1]", ["g_1"]),
        ("*_b", ["b"]),
        ("*override_*", ["a", "b", "g_0", "g_1"]),
    ],
)
def test_selectors(make_recipe: Any, selector: str, variants: list[str]) -> None:
    jobs = load_recipe_document(_override_file(make_recipe), file="o.yaml", selector=selector)
    assert [j.variant for j in jobs] == variants


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            "override_zz",
            "o.yaml: override 'override_zz' not found; available: override_a, override_b, "
            "zip_override_g[i]",
        ),
        (
            "zip_override_g[5]",
            "o.yaml: $.zip_override_g: index [5] is out of range for 'zip_override_g' (it has 2 "
            "variants, valid: 0-1)",
        ),
        (
            "bad selector!",
            "o.yaml: invalid selector 'bad selector!'; use 'base', 'override_<name>', "
            "'zip_override_<name>', 'zip_override_<name>[N]', or a glob such as '*mtp*'",
        ),
        (
            "*nothing*",
            "o.yaml: no variants match '*nothing*'; available: override_a, override_b, "
            "zip_override_g",
        ),
    ],
)
def test_selector_errors(make_recipe: Any, selector: str, message: str) -> None:
    with pytest.raises(RecipeError) as err:
        load_recipe_document(_override_file(make_recipe), file="o.yaml", selector=selector)
    assert _messages(err.value) == [message]


def test_zip_length_mismatch(make_recipe: Any) -> None:
    doc = _override_file(make_recipe)
    doc["zip_override_g"] = {"roles": {"agg": {"args": {"tp": [1, 2], "pp": [1, 2, 3]}}}}
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="o.yaml", selector="zip_override_g")
    assert _messages(err.value) == [
        "o.yaml: $.zip_override_g: zip lists have incompatible lengths [2, 3]; every list must "
        "have the same length, or length 1 (used for every variant)"
    ]


def test_override_file_layout_errors(make_recipe: Any) -> None:
    doc = _override_file(make_recipe)
    doc["name"] = "stray"
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="o.yaml")
    assert err.value.issues[0].path == "$.name"
    assert "move `name` under `base`" in err.value.issues[0].message


def test_errors_of_every_variant_are_collected(make_recipe: Any) -> None:
    doc = _override_file(make_recipe)
    doc["override_a"] = {"roles": {"agg": {"wokers": 1}}}
    doc["override_b"] = {"benchmark": {"isl": "x"}}
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="o.yaml")
    assert [(i.file, i.path) for i in err.value.issues] == [
        ("o.yaml:override_a", "$.roles.agg.wokers"),
        ("o.yaml:override_b", "$.benchmark.isl"),
    ]


def test_selector_on_a_plain_recipe_is_an_error(make_recipe: Any) -> None:
    with pytest.raises(RecipeError, match="this file is not an override file"):
        load_recipe_document(make_recipe(), file="r.yaml", selector="base")


# -- sweeps --------------------------------------------------------------------------------------
def test_sweep_grid_names_and_typed_placeholders(make_recipe: Any) -> None:
    doc = make_recipe(
        sweep={"c": [4, 8], "mode": ["x", "y"]},
        benchmark={"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": ["{c}"]},
        environment={"RUN": "run-{c}-{mode}"},
    )
    jobs = load_recipe_document(doc, file="s.yaml")
    assert [j.name for j in jobs] == [
        "unit_c4_modex",
        "unit_c4_modey",
        "unit_c8_modex",
        "unit_c8_modey",
    ]
    assert jobs[2].recipe.benchmark.concurrencies == (8,)
    assert jobs[2].recipe.environment == {"RUN": "run-8-x"}
    assert jobs[2].sweep_params == {"c": 8, "mode": "x"}
    assert "sweep" not in jobs[0].document


def test_sweep_errors_name_the_job(make_recipe: Any) -> None:
    doc = make_recipe(sweep={"w": [1, "many"]})
    doc["roles"]["agg"]["workers"] = "{w}"
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="s.yaml")
    assert _messages(err.value) == [
        "s.yaml [w=many]: $.roles.agg.workers: expected an integer or null, got 'many'"
    ]


def test_sweep_values_must_be_lists(make_recipe: Any) -> None:
    with pytest.raises(RecipeError, match=r"\$\.sweep\.c: must be a non-empty list"):
        load_recipe_document(make_recipe(sweep={"c": 4}), file="s.yaml")


# -- --set / --unset ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arg", "value"),
    [
        ("a.b=720", 720),
        ('a.b="720"', "720"),
        ("a.b=[4, 8]", [4, 8]),
        ('a.b={"x": 1}', '{"x": 1}'),
        ("a.b=true", True),
        ("a.b=", ""),
        ("a.b=null", None),
    ],
)
def test_set_values_are_yaml_typed(arg: str, value: object) -> None:
    assert parse_set(arg).value == value


def test_paths() -> None:
    assert parse_path('a.b[2]."c.d"') == ("a", "b", 2, "c.d")
    for bad in ("", "a..b", "[1]", "a[x]", 'a."b', "a.", "a.b]"):
        with pytest.raises(OverrideSyntaxError):
            parse_path(bad)
    with pytest.raises(OverrideSyntaxError, match="--set expects KEY=VALUE, got 'x'"):
        parse_set("x")


def test_set_and_unset_apply_in_order(make_recipe: Any) -> None:
    overrides = (parse_unset("environment"), parse_set("environment.A=1"), parse_set("x.y=2"))
    out = apply_overrides(make_recipe(), overrides)
    assert "environment" not in out
    assert out["x"] == {"y": 2}
    assert apply_overrides(out, (parse_unset("missing.key"),)) == out


def test_set_errors() -> None:
    with pytest.raises(OverrideSyntaxError, match=r"a\[3\]: index \[3\] is out of range"):
        apply_overrides({"a": [1]}, (parse_set("a[3]=1"),))
    with pytest.raises(OverrideSyntaxError, match="cannot descend into a non-mapping at 'b'"):
        apply_overrides({"a": {"b": 1}}, (parse_set("a.b.c=1"),))


def test_set_on_an_override_file_reaches_every_variant(make_recipe: Any) -> None:
    doc = _override_file(make_recipe)
    jobs = load_recipe_document(doc, file="o.yaml", overrides=(parse_set("roles.agg.workers=3"),))
    assert {j.recipe.roles["agg"].workers for j in jobs} == {3}
    out = apply_overrides(doc, (parse_set("benchmark.isl=9"),))
    assert out["zip_override_g"]["benchmark"] == {"isl": [9]}
    assert out["override_a"]["benchmark"] == {"isl": 9}


def test_render() -> None:
    assert parse_set("a.b=[1, 2]").render() == "--set a.b=[1, 2]"
    assert parse_set("a.b=true").render() == "--set a.b=true"
    assert parse_unset("a.b").render() == "--unset a.b"


# -- cluster config ------------------------------------------------------------------------------
CLUSTER = """
default_account: acct
default_partition: batch
default_time_limit: "02:00:00"
gpus_per_node: 8
model_paths:
  tiny: /models/tiny
containers:
  sglang: nvcr.io#lmsys/sglang:v1
default_sbatch_directives:
  qos: high
  comment: cluster
default_health_check:
  max_attempts: 5
  interval_seconds: 2
"""


def test_cluster_defaults_and_aliases(make_recipe: Any) -> None:
    cluster = parse_cluster_config(CLUSTER, file="srtslurm.yaml")
    doc = make_recipe(
        model={"path": "tiny", "container": "sglang", "precision": "bf16"},
        sbatch_directives={"comment": "recipe"},
        environment={"IMAGE": "sglang"},
    )
    doc["roles"]["agg"]["container"] = "sglang"
    doc["resources"] = {}
    [job] = load_recipe_document(doc, file="r.yaml", cluster=cluster)
    recipe = job.recipe
    assert (recipe.slurm.account, recipe.slurm.partition, recipe.slurm.time_limit) == (
        "acct",
        "batch",
        "02:00:00",
    )
    assert recipe.resources.gpus_per_node == 8
    assert recipe.model.path == "/models/tiny"
    assert recipe.model.container == "nvcr.io#lmsys/sglang:v1"
    assert recipe.roles["agg"].container == "nvcr.io#lmsys/sglang:v1"
    assert recipe.environment == {"IMAGE": "sglang"}  # never inside env
    assert recipe.sbatch_directives == {"qos": "high", "comment": "recipe"}
    assert (recipe.health_check.max_attempts, recipe.health_check.interval_seconds) == (5, 2)


def test_recipe_values_win_over_cluster_defaults(make_recipe: Any) -> None:
    cluster = parse_cluster_config(CLUSTER, file="srtslurm.yaml")
    doc = make_recipe(slurm={"partition": "mine"}, health_check={"max_attempts": 9})
    [job] = load_recipe_document(doc, file="r.yaml", cluster=cluster)
    assert job.recipe.slurm.partition == "mine"
    assert job.recipe.resources.gpus_per_node == 4
    assert job.recipe.health_check.max_attempts == 9
    assert job.recipe.health_check.interval_seconds == 10  # whole block replaced, not merged


def test_a_bad_cluster_file_is_an_error_never_ignored() -> None:
    with pytest.raises(ClusterConfigError) as err:
        parse_cluster_config("default_container: x\ngpus_per_node: '8'\n", file="srtslurm.yaml")
    assert [i.render() for i in err.value.issues] == [
        "srtslurm.yaml: $.default_container: unknown key `default_container`; did you mean "
        "`default_account`? allowed here: "
        + ", ".join(
            [
                "cluster",
                "default_account",
                "default_partition",
                "default_time_limit",
                "gpus_per_node",
                "default_gpu_type",
                "network_interface",
                "visible_devices_env",
                "default_gpu_exporter",
                "use_gpus_per_node_directive",
                "use_segment_sbatch_directive",
                "use_exclusive_sbatch_directive",
                "use_het_jobs",
                "default_sbatch_directives",
                "default_health_check",
                "srtctl_root",
                "output_dir",
                "model_paths",
                "containers",
                "container_versions",
                "cloud",
                "default_mounts",
                "default_bash_preamble",
                "default_host_setup",
                "reporting",
                "telemetry",
                "nginx_raise_ulimit",
                "git_http_version",
                "preflight",
                "container_runtime",
                "runtime_python",
                "launcher",
            ]
        ),
        "srtslurm.yaml: $.gpus_per_node: expected an integer or null, got '8'",
    ]


def test_cluster_extensions_parse() -> None:
    cluster = parse_cluster_config(
        "container_runtime: none\nlauncher: local\nruntime_python: /opt/venv\n", file="c.yaml"
    )
    assert (cluster.container_runtime, cluster.launcher, cluster.runtime_python) == (
        "none",
        "local",
        "/opt/venv",
    )


def test_apply_cluster_defaults_without_a_cluster_is_a_copy(make_recipe: Any) -> None:
    doc = make_recipe()
    out = apply_cluster_defaults(doc, None)
    assert out == doc and out is not doc


# -- lockfiles -----------------------------------------------------------------------------------
def test_a_lockfile_loads_as_its_recipe_and_keeps_its_lock_section(make_recipe: Any) -> None:
    lock = {"version": 2, "fingerprints": {"agg_w0": {"arch": "x86_64"}}, "integrity": "ab"}
    (job,) = load_recipe_document({**make_recipe(), "lock": lock}, file="r.lock.yaml")
    assert job.lock == lock
    assert "lock" not in job.document
    (plain,) = load_recipe_document(make_recipe(), file="r.yaml")
    assert plain.lock is None
    assert plain.recipe == job.recipe


def test_every_variant_of_a_locked_override_file_carries_the_lock(make_recipe: Any) -> None:
    jobs = load_recipe_document({**_override_file(make_recipe), "lock": {"v": 1}}, file="o.yaml")
    assert len(jobs) == 4 and all(j.lock == {"v": 1} for j in jobs)


# -- a caller-supplied tokenizer (the stand-in engine mode) -------------------------------------
def test_an_hf_model_with_synthetic_prompts_loads_and_keeps_its_hub_tokenizer(
    make_recipe: Any,
) -> None:
    doc = make_recipe(
        model={"path": "hf:Qwen/Qwen3-0.6B", "container": "c.sqsh", "precision": "bf16"},
        benchmark={"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]},
    )
    (job,) = load_recipe_document(doc, file="r.yaml")  # the client fetches it from the hub
    assert job.recipe.benchmark.custom_tokenizer is None
    # the stand-in mode's tokenizer does not replace the hub's: the hub path runs there too
    (job,) = load_recipe_document(doc, file="r.yaml", tokenizer="/out/.stand-in-model")
    assert job.recipe.benchmark.custom_tokenizer is None
    # ... but it does replace a tokenizer class, which the stand-in host cannot import
    doc["benchmark"]["custom_tokenizer"] = "sa_bench_tokenizers.vllm_deepseek_v4.Tokenizer"
    (job,) = load_recipe_document(doc, file="r.yaml", tokenizer="/out/.stand-in-model")
    assert job.recipe.benchmark.custom_tokenizer == "/out/.stand-in-model"


def test_a_supplied_tokenizer_replaces_the_recipes_and_skips_types_without_one(
    make_recipe: Any,
) -> None:
    sa = make_recipe(benchmark={"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1],
                                "custom_tokenizer": "/cluster/tok"})  # fmt: skip
    (job,) = load_recipe_document(sa, file="r.yaml", tokenizer="/here/tok")
    assert job.recipe.benchmark.custom_tokenizer == "/here/tok"
    manual = make_recipe(benchmark={"type": "manual"})
    (job,) = load_recipe_document(manual, file="r.yaml", tokenizer="/here/tok")
    assert "custom_tokenizer" not in job.document["benchmark"]

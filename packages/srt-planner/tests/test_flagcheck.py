"""The flag check (srt_planner.flagcheck) over hand-made catalogs: resolution and messages."""

from __future__ import annotations

from typing import Any

from planner_testkit import RecipeFactory

from srt_planner import plan_job
from srt_planner.flagcheck import (
    FlagCatalog,
    FlagFinding,
    Installed,
    check_plan,
    program_of,
    resolve_catalogs,
    version_key,
)
from srt_planner.plan import StandIn
from srt_schema.cluster import ClusterConfig

CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")


def _catalog(tool: str, version: str, *flags: str, **entries: Any) -> FlagCatalog:
    table: dict[str, Any] = {flag: ("str", None, None, False) for flag in flags}
    table.update({f"--{k.replace('_', '-')}": v for k, v in entries.items()})
    return FlagCatalog(tool=tool, version=version, origin="test", flags=table)


SGLANG_OLD = _catalog(
    "sglang",
    "0.5.8",
    "--tensor-parallel-size",
    "--old-flag",
    attention_backend=("str", ["fa3", "triton"], None, False),
)
SGLANG_NEW = _catalog("sglang", "0.5.23", "--tensor-parallel-size", "--speculative-algorithm")
CATALOGS = {"sglang": {"0.5.8": SGLANG_OLD, "0.5.23": SGLANG_NEW}}


def _findings(
    make_recipe: RecipeFactory,
    args: dict[str, Any],
    *,
    cluster: ClusterConfig = CLUSTER,
    **fields: Any,
) -> list[FlagFinding]:
    recipe = make_recipe(
        frontend={"type": "sglang"},
        roles={"agg": {"nodes": 1, "workers": 1, "args": args}},
        **fields,
    )
    plan = plan_job(recipe, cluster, ("node-01",), "1")
    return [
        f for f in check_plan(plan, recipe, cluster, CATALOGS) if not f.path.startswith("process ")
    ]


def _tagged(image: str) -> dict[str, Any]:
    return {"model": {"path": "/models/m", "container": image, "precision": "bf16"}}


def test_a_misspelled_flag_names_the_version_and_the_right_spelling(
    make_recipe: RecipeFactory,
) -> None:
    findings = _findings(
        make_recipe, {"tensor-paralel-size": 2}, **_tagged("lmsysorg/sglang:v0.5.8-cu130")
    )
    assert [(f.severity, f.path, f.kind) for f in findings] == [
        ("error", "$.roles.agg.args.tensor-paralel-size", "unknown-flag")
    ]
    message = findings[0].message
    assert "sglang 0.5.8 (image lmsysorg/sglang:v0.5.8-cu130)" in message
    assert message.endswith("did you mean --tensor-parallel-size?")
    assert (
        _findings(
            make_recipe, {"tensor-parallel-size": 2}, **_tagged("lmsysorg/sglang:v0.5.8-cu130")
        )
        == []
    )


def test_a_flag_of_another_version_says_which(make_recipe: RecipeFactory) -> None:
    (finding,) = _findings(make_recipe, {"old-flag": 1}, **_tagged("lmsysorg/sglang:v0.5.23"))
    assert finding.severity == "error" and finding.kind == "other-version"
    assert (
        "not a flag of sglang 0.5.23" in finding.message
        and "exists in sglang 0.5.8" in finding.message
    )


def test_a_value_outside_the_declared_choices(make_recipe: RecipeFactory) -> None:
    (finding,) = _findings(
        make_recipe, {"attention-backend": "fa9"}, **_tagged("lmsysorg/sglang:v0.5.8")
    )
    assert finding.kind == "bad-choice" and finding.severity == "error"
    assert "'fa9' is not one of fa3, triton" in finding.message


def test_an_unresolved_version_warns_with_the_nearest_catalog(make_recipe: RecipeFactory) -> None:
    recipe = make_recipe(
        frontend={"type": "sglang"},
        roles={
            "agg": {
                "nodes": 1,
                "workers": 1,
                "args": {"old-flag": 1, "totally-new": 1, "tensor-paralel-size": 1},
            }
        },
        **_tagged("sglang.sqsh"),
    )
    plan = plan_job(recipe, CLUSTER, ("node-01",), "1")
    by_path = {f.path: f for f in check_plan(plan, recipe, CLUSTER, CATALOGS)}
    version = next(f for f in by_path.values() if f.kind == "version-unresolved")
    assert version.severity == "warning" and "nearest, sglang 0.5.23" in version.message
    # known to another version, or unknown to all without a near miss: a warning
    assert by_path["$.roles.agg.args.old-flag"].severity == "warning"
    assert by_path["$.roles.agg.args.totally-new"].severity == "warning"
    # a near miss of a known flag is a typo whatever the version
    assert by_path["$.roles.agg.args.tensor-paralel-size"].severity == "error"


def test_container_versions_pin_an_alias_image(make_recipe: RecipeFactory) -> None:
    cluster = ClusterConfig(
        default_account="acct",
        default_partition="batch",
        containers={"sglang": "/images/sglang.sqsh"},
        container_versions={"sglang": {"sglang": "0.5.23"}},
    )
    (finding,) = _findings(
        make_recipe, {"old-flag": 1}, cluster=cluster, **_tagged("/images/sglang.sqsh")
    )
    assert finding.severity == "error"
    assert "sglang 0.5.23 (srtslurm.yaml container_versions)" in finding.message


def test_an_abbreviation_argparse_accepts_is_no_finding(make_recipe: RecipeFactory) -> None:
    assert (
        _findings(make_recipe, {"speculative-algo": "EAGLE"}, **_tagged("lmsysorg/sglang:v0.5.23"))
        == []
    )


def test_the_dynamo_version_comes_from_dynamo_source(make_recipe: RecipeFactory) -> None:
    catalogs = {
        "dynamo-frontend": {
            "0.8.0": _catalog("dynamo-frontend", "0.8.0", "--http-port", "--router-reset-states"),
            "1.6.1": _catalog("dynamo-frontend", "1.6.1", "--http-port"),
        }
    }
    recipe = make_recipe(frontend={"args": {"router-reset-states": True}})
    plan = plan_job(recipe, CLUSTER, ("node-01",), "1")
    (finding,) = check_plan(plan, recipe, CLUSTER, catalogs)
    assert finding.path == "$.frontend.args.router-reset-states" and finding.severity == "error"
    assert "dynamo-frontend 1.6.1 (the Dynamo release srt installs by default)" in finding.message
    pinned = make_recipe(
        frontend={"args": {"router-reset-states": True}}, dynamo={"source": {"pypi": "0.8.0"}}
    )
    assert check_plan(plan_job(pinned, CLUSTER, ("node-01",), "1"), pinned, CLUSTER, catalogs) == []
    # container runtime none: srt installs the pinned Dynamo for the job, except with stand-in
    # engines, which run this host's Dynamo
    local = ClusterConfig(container_runtime="none", launcher="local")
    assert check_plan(plan_job(pinned, local, ("node-01",), "1"), pinned, local, catalogs) == []
    plan = plan_job(pinned, local, ("node-01",), "1", stand_in=StandIn(model="/m"))
    host = Installed(where="this host's install", versions={"dynamo": "1.6.1"})
    (finding,) = check_plan(plan, pinned, local, catalogs, host=host)
    assert "(this host's install)" in finding.message


def test_programs_are_found_in_the_argv() -> None:
    assert program_of(("python3", "-m", "dynamo.sglang", "--x")) == (("sglang", "dynamo-sglang"), 3)
    assert program_of(("vllm", "serve", "/m", "--x")) == (("vllm",), 3)
    assert program_of(("smg", "launch", "--x")) == (("smg",), 2)
    assert program_of(("python3", "-m", "dynamo.mocker")) is None


def test_versions_sort_in_release_order() -> None:
    versions = ["0.5.11", "0.5.8.post1", "0.5.8", "0.5.23"]
    assert sorted(versions, key=version_key) == ["0.5.8", "0.5.8.post1", "0.5.11", "0.5.23"]


def test_a_probed_image_version_beats_its_tag(make_recipe: RecipeFactory) -> None:
    image = "lmsysorg/sglang:v0.5.8-cu130"
    recipe = make_recipe(
        frontend={"type": "sglang"},
        roles={"agg": {"nodes": 1, "workers": 1, "args": {"speculative-algorithm": "EAGLE"}}},
        **_tagged(image),
    )
    plan = plan_job(recipe, CLUSTER, ("node-01",), "1")
    (tagged,) = _findings(make_recipe, {"speculative-algorithm": "EAGLE"}, **_tagged(image))
    assert tagged.kind == "other-version" and "sglang 0.5.8 (image" in tagged.message
    probed = Installed(where="probed in image x, python3 on n1", versions={"sglang": "0.5.23"})
    (choice,) = resolve_catalogs(plan, recipe, CLUSTER, CATALOGS, images={image: probed})
    assert (choice.tool, choice.version, choice.where) == ("sglang", "0.5.23", probed.where)
    assert (choice.catalog, choice.exact) == ("0.5.23", True)
    findings = check_plan(plan, recipe, CLUSTER, CATALOGS, images={image: probed})
    assert [f for f in findings if not f.path.startswith("process ")] == []
    # a version the probe found that has no catalog: the nearest, said
    older = Installed(where="probed", versions={"sglang": "0.5.9"})
    (choice,) = resolve_catalogs(plan, recipe, CLUSTER, CATALOGS, images={image: older})
    assert (choice.version, choice.catalog, choice.exact) == ("0.5.9", "0.5.8", False)


def test_srt_s_own_dynamo_install_beats_the_probed_image(make_recipe: RecipeFactory) -> None:
    catalogs = {
        "dynamo-frontend": {
            "0.8.0": _catalog("dynamo-frontend", "0.8.0", "--http-port"),
            "1.6.1": _catalog("dynamo-frontend", "1.6.1", "--http-port"),
        }
    }
    image = "nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.8.0"
    probed = {image: Installed(where="probed", versions={"dynamo": "0.8.0"})}
    recipe = make_recipe(
        model={"path": "/m", "container": image, "precision": "bf16"}, dynamo={"install": False}
    )
    plan = plan_job(recipe, CLUSTER, ("node-01",), "1")
    (choice,) = resolve_catalogs(plan, recipe, CLUSTER, catalogs, images=probed)
    assert (choice.version, choice.where) == ("0.8.0", "probed")
    pinned = make_recipe(
        model={"path": "/m", "container": image, "precision": "bf16"},
        dynamo={"source": {"pypi": "1.6.1"}},
    )
    plan = plan_job(pinned, CLUSTER, ("node-01",), "1")
    (choice,) = resolve_catalogs(plan, pinned, CLUSTER, catalogs, images=probed)
    # srt installs the pinned Dynamo into the container: that is what runs, whatever its tag
    assert (choice.version, choice.where) == ("1.6.1", "dynamo.source")
    default = make_recipe(model={"path": "/m", "container": image, "precision": "bf16"})
    plan = plan_job(default, CLUSTER, ("node-01",), "1")
    (choice,) = resolve_catalogs(plan, default, CLUSTER, catalogs, images=probed)
    assert (choice.version, choice.where) == ("1.6.1", "the Dynamo release srt installs by default")

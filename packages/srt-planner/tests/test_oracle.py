"""Our plans against the reference launch plans (shared/oracle/plans, 52 recipe variants).

Each reference recipe is migrated v1 -> v2, patched where srtctl validate refuses it for a reason
that is not about planning (oracle_patches.py, ``recipe-patch`` rows), loaded and planned on the
oracle's node list; every worker must sit on the same node(s) and GPUs with the same engine argv
and environment, except for the differences listed in docs/deviations.md (the only source of
exceptions). The benchmark
step is compared too (oracle_bench.py): its parameters, endpoint and tokenizer, and one served
model name shared by every worker, our bench.json and the reference's benchmark.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import msgspec
import pytest
from oracle_bench import compare_benchmark, served_names
from oracle_parts import compare_files, compare_ports, once, reference_srun, srun_shape
from oracle_patches import PATCHES, applicable, expected_bench, load_patched, reference_env
from schema_corpus import ABSENT

from srt_planner import plan_allocation, plan_job, render_sbatch
from srt_planner.plan import JobPlan, ProcessSpec
from srt_schema.cluster import ClusterConfig
from srt_schema.errors import RecipeError, SchemaError
from srt_schema.migrate import migrate_text
from srt_schema.recipe import ProfilingConfig, Recipe

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SHARED = REPO.parent / "shared"
ORACLE = Path(os.environ.get("SRT_ORACLE", str(SHARED / "oracle"))) / "plans"
CORPUS = Path(os.environ.get("SRT_CORPUS", str(SHARED / "corpus")))
V1 = CORPUS / "v1" / "NVIDIA" / "srt-slurm"
DEVIATIONS = REPO / "docs" / "deviations.md"
#: The reference plans were rendered with these cluster defaults.
CLUSTER = ClusterConfig(default_account="oracle-account", default_partition="oracle-partition")

pytestmark = pytest.mark.corpus  # the reference plans and the v1 corpus live outside the repo


class Deviations(msgspec.Struct, frozen=True, kw_only=True):
    flags: frozenset[str]
    #: Options srt adds with their value (``--model-name X``): both tokens are ignored.
    options: frozenset[str] = frozenset()
    flag_values: frozenset[str]
    env: frozenset[str]
    recipes: dict[str, str]
    programs: dict[str, str] = {}
    engine_config: frozenset[str] = frozenset()
    srun: frozenset[str] = frozenset()
    #: Benchmark settings that differ deliberately (a key of oracle_bench's records).
    bench: frozenset[str] = frozenset()
    #: Reference worker programs whose served name is not what the reference's benchmark asks.
    served_name: frozenset[str] = frozenset()
    #: Worker environment variables holding a path that deliberately differs (``env-path``).
    env_path: frozenset[str] = frozenset()
    #: Options the reference repeats with the same value; its repeats count once (``flag-repeat``).
    flag_repeats: frozenset[str] = frozenset()
    #: Recipe patches applied before loading (``recipe-patch``, oracle_patches.PATCHES).
    recipe_patches: tuple[str, ...] = ()
    #: Reference plans (file names) whose recipe asks for more frontends than the reference
    #: placed: srt places them all (``frontend-count``); the reference's are compared as ours'
    #: first ones, and ours must be more.
    frontend_count: frozenset[str] = frozenset()


def read_deviations(text: str) -> Deviations:
    """Parse the ``| id | kind | name | reason |`` rows of docs/deviations.md."""
    rows = re.findall(r"^\| (D\d+) \| ([a-z-]+) \| (\S+) \| (.+) \|$", text, flags=re.MULTILINE)
    by_kind: dict[str, dict[str, str]] = {}
    for _, kind, name, reason in rows:
        by_kind.setdefault(kind, {})[name] = reason
    unknown = set(by_kind) - {
        "flag",
        "option",
        "flag-value",
        "env",
        "recipe",
        "program",
        "engine-config",
        "srun",
        "bench",
        "served-name",
        "env-path",
        "flag-repeat",
        "recipe-patch",
        "frontend-count",
    }
    assert not unknown, f"docs/deviations.md: unknown deviation kinds {sorted(unknown)}"
    return Deviations(
        flags=frozenset(by_kind.get("flag", {})),
        options=frozenset(by_kind.get("option", {})),
        flag_values=frozenset(by_kind.get("flag-value", {})),
        env=frozenset(by_kind.get("env", {})),
        recipes=by_kind.get("recipe", {}),
        programs=dict(name.split("->", 1) for name in by_kind.get("program", {})),
        engine_config=frozenset(by_kind.get("engine-config", {})),
        srun=frozenset(by_kind.get("srun", {})),
        bench=frozenset(by_kind.get("bench", {})),
        served_name=frozenset(by_kind.get("served-name", {})),
        env_path=frozenset(by_kind.get("env-path", {})),
        flag_repeats=frozenset(by_kind.get("flag-repeat", {})),
        recipe_patches=tuple(by_kind.get("recipe-patch", {})),
        frontend_count=frozenset(by_kind.get("frontend-count", {})),
    )


DEVIATION_LIST = read_deviations(DEVIATIONS.read_text())


def _directive(line: str) -> str:
    return " ".join(shlex.split(line.strip()))


def _normalise(argv: list[str], deviations: Deviations) -> list[str]:
    out: list[str] = []
    skip_value = False
    drop_next = False
    for arg in argv:
        if drop_next:
            drop_next = False
        elif arg in deviations.options:
            drop_next = True
        elif skip_value:
            out.append("<deviation>")
            skip_value = False
        elif arg in deviations.flags:
            continue
        else:
            out.append(arg)
            skip_value = arg in deviations.flag_values
    return out


def _env(env: dict[str, str], deviations: Deviations) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in deviations.env}


def migrated(oracle: dict[str, Any]) -> str:
    """The reference's v1 recipe migrated to schema 2."""
    return _migrate(oracle["recipe"])


@functools.cache
def _migrate(recipe: str) -> str:
    return migrate_text((V1 / recipe).read_text(), file=recipe).text


def patches(oracle: dict[str, Any], deviations: Deviations = DEVIATION_LIST) -> tuple[str, ...]:
    """The ``recipe-patch`` rows that apply to the reference's recipe."""
    return applicable(migrated(oracle), deviations.recipe_patches)


def plan_reference(
    oracle: dict[str, Any], deviations: Deviations | None = None
) -> tuple[Recipe, JobPlan]:
    """The reference's recipe migrated, patched, loaded and planned on the oracle's nodes."""
    applied = patches(oracle, deviations or DEVIATION_LIST)
    jobs = load_patched(migrated(oracle), file=oracle["recipe"], cluster=CLUSTER, patches=applied)
    recipe = jobs[0].recipe
    return recipe, plan_job(recipe, CLUSTER, oracle["nodes"], "1234", addresses=oracle["node_ips"])


def compare(oracle: dict[str, Any], deviations: Deviations) -> list[str]:
    """Differences between the reference plan and ours, after the listed deviations."""
    recipe, plan = plan_reference(oracle, deviations)
    script = render_sbatch(
        plan_allocation(recipe, CLUSTER), output_base="<OUTPUT_BASE>", command=("srt-runtime",)
    )
    ours: dict[str, ProcessSpec] = {s.name: s for s in plan.processes if s.kind == "worker"}
    theirs = {p["name"]: p for p in oracle["processes"] if p["kind"] == "worker"}
    applied = patches(oracle, deviations)
    problems: list[str] = []
    directives = [_directive(line) for line in script.splitlines() if line.startswith("#SBATCH")]
    reference = [
        _directive(line) for line in oracle["sbatch"].splitlines() if line.startswith("#SBATCH")
    ]
    if directives != reference:
        problems.append(f"sbatch directives\n  ours: {directives}\n  ref:  {reference}")
    if sorted(ours) != sorted(theirs):
        return [f"workers differ: ours {sorted(ours)} vs reference {sorted(theirs)}"]
    for name, reference in theirs.items():
        spec = ours[name]
        nodes = reference.get("endpoint_nodes") if "ranks" in reference else reference["nodes"]
        if list(spec.nodes) != list(nodes):
            problems.append(f"{name}: nodes {spec.nodes} vs {nodes}")
        if list(spec.gpus) != list(reference["gpus"] or []):
            problems.append(f"{name}: gpus {spec.gpus} vs {reference['gpus']}")
        mine, want = (
            _normalise(list(spec.argv), deviations),
            _normalise(once(reference["command_argv"], deviations.flag_repeats), deviations),
        )
        if mine != want:
            problems.append(f"{name}: argv\n  ours: {mine}\n  ref:  {want}")
        srun_ours = sorted(srun_shape(list(spec.srun_argv)))
        srun_ref = sorted(reference_srun(reference, recipe.srun_options, deviations.srun))
        if srun_ours != srun_ref:
            problems.append(f"{name}: srun\n  ours: {srun_ours}\n  ref:  {srun_ref}")
        mine_env = _env(spec.env, deviations)
        want_env = _env(reference_env(applied, reference["env"]), deviations)
        if mine_env != want_env:
            keys = sorted(
                k for k in set(mine_env) | set(want_env) if mine_env.get(k) != want_env.get(k)
            )
            problems.append(f"{name}: env differs in {keys}")
    problems += compare_ports(oracle["worker_topology"], plan.processes)
    problems += _compare_frontends(oracle, plan, deviations)
    problems += compare_benchmark(oracle, plan, deviations.bench, expected_bench(applied))
    return problems


def _compare_frontends(oracle: dict[str, Any], plan: JobPlan, deviations: Deviations) -> list[str]:
    """Frontend nodes and argv, the nginx node, and the node roles."""
    problems = []
    ours = [(s.nodes[0], list(s.argv)) for s in plan.processes if s.kind == "frontend"]
    theirs = []
    for process in oracle["processes"]:
        if process["kind"] == "frontend":
            argv = list(process["command_argv"])
            argv[0] = deviations.programs.get(argv[0], argv[0])
            theirs.append((process["node"], argv))
    if _plan_file(oracle) in deviations.frontend_count:
        if len(ours) <= len(theirs):
            problems.append(f"frontend-count row not needed: {len(ours)} frontends as the ref")
        ours = ours[: len(theirs)]
    if ours != theirs:
        problems.append(f"frontends differ:\n  ours: {ours}\n  ref:  {theirs}")
    nginx_ours = [s.nodes[0] for s in plan.processes if s.kind == "proxy"]
    nginx_theirs = [p["node"] for p in oracle["processes"] if p["kind"] == "nginx"]
    if nginx_ours != nginx_theirs:
        problems.append(f"nginx nodes {nginx_ours} vs {nginx_theirs}")
    bench_ours = [s.nodes[0] for s in plan.processes if s.kind == "benchmark"]
    bench_theirs = [p["node"] for p in oracle["processes"] if p["kind"] == "benchmark"]
    if bench_ours != bench_theirs:
        problems.append(f"benchmark nodes {bench_ours} vs {bench_theirs}")
    roles = plan.node_roles
    mine = (roles.head, roles.bench, roles.infra, list(roles.workers))
    reference = oracle["node_roles"]
    want = (reference["head"], reference["bench"], reference["infra"], reference["worker"])
    if mine != want:
        problems.append(f"node roles {mine} vs {want}")
    files = compare_files(oracle, plan, deviations.engine_config)
    if _plan_file(oracle) in deviations.frontend_count:
        files = [p for p in files if not _extends_upstreams(p)]
    return problems + files


def _plan_file(oracle: dict[str, Any]) -> str:
    """The reference plan's file name (``recipes/a/b.yaml`` -> ``recipes__a__b.yaml.json``)."""
    return str(oracle["recipe"]).replace("/", "__") + ".json"


def _extends_upstreams(problem: str) -> bool:
    """An nginx upstream list of ours that starts with the reference's (``frontend-count``)."""
    found = re.match(r"nginx upstreams (\[.*\]) vs (\[.*\])$", problem)
    if found is None:
        return False
    got, want = (re.findall(r"'([^']+)'", part) for part in found.groups())
    return len(got) > len(want) and got[: len(want)] == want


ORACLE_FILES = sorted(ORACLE.glob("*.json"))


def _cases(paths: list[Path]) -> list[Any]:
    """One case per reference plan; without the plans one skipped placeholder (no crash)."""
    return [pytest.param(p, id=p.name) for p in paths] or [ABSENT]


def test_oracle_is_present() -> None:
    assert len(ORACLE_FILES) == 52, f"expected the 52 reference plans under {ORACLE}"


@pytest.mark.parametrize("path", _cases(ORACLE_FILES))
def test_matches_reference(path: Path) -> None:
    oracle = json.loads(path.read_text())
    listed = DEVIATION_LIST.recipes.get(path.name)
    if listed is not None:
        # A listed recipe must still be unplannable; once it plans, drop it from the list.
        with pytest.raises(SchemaError):
            compare(oracle, DEVIATION_LIST)
        return
    assert compare(oracle, DEVIATION_LIST) == []


def test_every_listed_deviation_is_needed() -> None:
    """An entry that no comparison needs any more is stale and must be removed."""
    used_flags: set[str] = set()
    used_env: set[str] = set()
    used_programs: set[str] = set()
    used_engine_config: set[str] = set()
    for path in ORACLE_FILES:
        oracle = json.loads(path.read_text())
        if path.name in DEVIATION_LIST.recipes:
            continue
        bare = Deviations(
            flags=frozenset(),
            flag_values=frozenset(),
            env=frozenset(),
            recipes={},
            recipe_patches=DEVIATION_LIST.recipe_patches,
        )
        if any("frontends differ" in p for p in compare(oracle, bare)):
            used_programs.update(
                k for k in DEVIATION_LIST.programs if f"'{k}', '-m'" in str(compare(oracle, bare))
            )
        for problem in compare(oracle, bare):
            used_engine_config.update(
                k for k in DEVIATION_LIST.engine_config if f"'{k}'" in problem
            )
            used_flags.update(
                f for f in DEVIATION_LIST.flags | DEVIATION_LIST.flag_values if f in problem
            )
            used_env.update(k for k in DEVIATION_LIST.env if f"'{k}'" in problem)
    assert DEVIATION_LIST.flags | DEVIATION_LIST.flag_values <= used_flags
    assert DEVIATION_LIST.env <= used_env
    assert set(DEVIATION_LIST.programs) <= used_programs
    assert DEVIATION_LIST.engine_config <= used_engine_config


@pytest.mark.parametrize("rule", sorted(DEVIATION_LIST.srun))
def test_every_srun_rule_is_needed(rule: str) -> None:
    without = msgspec.structs.replace(DEVIATION_LIST, srun=DEVIATION_LIST.srun - {rule})
    needed = False
    for path in ORACLE_FILES:
        if path.name in DEVIATION_LIST.recipes:
            continue
        if any(": srun" in problem for problem in compare(json.loads(path.read_text()), without)):
            needed = True
            break
    assert needed, f"docs/deviations.md: srun rule {rule!r} is no longer needed; remove it"


PLANNABLE = [p for p in ORACLE_FILES if p.name not in DEVIATION_LIST.recipes]


@pytest.mark.parametrize("path", _cases(PLANNABLE))
def test_served_name_agrees(path: Path) -> None:
    """Every worker serves the name our bench.json asks for, which is the reference's."""
    oracle = json.loads(path.read_text())
    _, plan = plan_reference(oracle)
    assert served_names(oracle, plan, DEVIATION_LIST.served_name) == []


def _planned() -> list[tuple[dict[str, Any], JobPlan]]:
    out = []
    for path in PLANNABLE:
        oracle = json.loads(path.read_text())
        out.append((oracle, plan_reference(oracle)[1]))
    return out


@pytest.mark.parametrize("program", sorted(DEVIATION_LIST.served_name))
def test_every_served_name_row_is_needed(program: str) -> None:
    """A ``served-name`` row holds while some reference worker of that program needs it."""
    exempt = DEVIATION_LIST.served_name - {program}
    needed = any(
        p.startswith("reference ")
        for oracle, plan in _planned()
        for p in served_names(oracle, plan, exempt)
    )
    assert needed, f"docs/deviations.md: served-name row {program!r} is no longer needed"


@pytest.mark.parametrize("key", sorted(DEVIATION_LIST.bench))
def test_every_bench_row_is_needed(key: str) -> None:
    without = DEVIATION_LIST.bench - {key}
    needed = any(
        f"benchmark {key}:" in p or f"$.benchmark.{key}:" in p
        for oracle, plan in _planned()
        for p in compare_benchmark(oracle, plan, without, expected_bench(patches(oracle)))
    )
    assert needed, f"docs/deviations.md: bench row {key!r} is no longer needed; remove it"


#: ``env-path`` rows: how to make the planner set the variable, and the reference's value for a
#: worker of ``role`` (v0.3: ``profiling.get_env_vars(mode, str(runtime.log_dir / "profiles"))``).
_ENV_PATHS = {
    "SGLANG_TORCH_PROFILER_DIR": (
        "examples__example.yaml.json",
        lambda recipe: msgspec.structs.replace(recipe, profiling=ProfilingConfig(type="torch")),
        lambda oracle, role: f"{oracle['runtime']['log_dir']}/profiles/{role}",
    ),
}


@pytest.mark.parametrize("name", sorted(DEVIATION_LIST.env_path))
def test_env_path_rows_hold(name: str) -> None:
    """Ours points inside the container's /logs mount; the reference's path is not mounted."""
    assert name in _ENV_PATHS, f"docs/deviations.md: no check for env-path row {name!r}"
    file, enable, reference_value = _ENV_PATHS[name]
    oracle = json.loads((ORACLE / file).read_text())
    recipe, _ = plan_reference(oracle)
    plan = plan_job(enable(recipe), CLUSTER, oracle["nodes"], "1234", addresses=oracle["node_ips"])
    workers = [s for s in plan.processes if s.kind == "worker"]
    assert workers
    for spec in workers:
        assert spec.env[name] == f"/logs/profiles/{spec.role}"
        # Our /logs is the job's log folder inside the container.
        assert spec.container is not None
        mounted = {m.container: m.host for m in spec.container.mounts}
        assert mounted["/logs"].endswith("/1234/logs"), mounted
        theirs = reference_value(oracle, spec.role)
        assert theirs != spec.env[name]
        targets = {m[1] for p in oracle["processes"] for m in p["container_mounts"]}
        assert not any(theirs == t or theirs.startswith(t + "/") for t in targets)


@pytest.mark.parametrize("path", _cases(PLANNABLE))
def test_every_recipe_patch_is_needed(path: Path) -> None:
    """Each patch applied to a recipe is needed: without it, srtctl validate refuses the recipe.
    (No recipe needs a patch since issue 28: every case loads its recipe as the reference wrote
    it in test_matches_reference; a patch row added later is checked here.)"""
    oracle = json.loads(path.read_text())
    applied = patches(oracle)
    for name in applied:
        others = tuple(p for p in applied if p != name)
        with pytest.raises(RecipeError) as refused:
            load_patched(migrated(oracle), file=oracle["recipe"], cluster=CLUSTER, patches=others)
        paths = {issue.path for issue in refused.value.issues}
        assert paths & set(PATCHES[name].refused), (
            f"recipe-patch {name!r}: refused at {sorted(paths)}, not at the patched path"
        )


def test_every_recipe_patch_row_applies() -> None:
    """A ``recipe-patch`` row of docs/deviations.md applies to some oracle recipe (none is listed
    since issue 28; one added later must be needed)."""
    applied = {name for p in PLANNABLE for name in patches(json.loads(p.read_text()))}
    unused = sorted(set(DEVIATION_LIST.recipe_patches) - applied)
    assert not unused, f"docs/deviations.md: recipe-patch rows {unused} apply to no oracle recipe"


@pytest.mark.parametrize("flag", sorted(DEVIATION_LIST.flag_repeats))
def test_every_flag_repeat_row_is_needed(flag: str) -> None:
    without = msgspec.structs.replace(
        DEVIATION_LIST, flag_repeats=DEVIATION_LIST.flag_repeats - {flag}
    )
    needed = any(
        ": argv" in problem and f"'{flag}'" in problem
        for path in PLANNABLE
        for problem in compare(json.loads(path.read_text()), without)
    )
    assert needed, f"docs/deviations.md: flag-repeat row {flag!r} is no longer needed; remove it"

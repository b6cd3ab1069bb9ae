"""Every v1 recipe of the shared corpus migrates to a schema-2 recipe that passes the JSON Schema.

The corpus lives outside the repository (env ``SRT_CORPUS``, default ``<repo>/../shared/corpus``).
Files that migrate but still cannot load under schema 2 (they use something our schema does not
have, or a cross-field rule refuses what would fail inside the allocation) are listed, with the
reason, in ``data/migrate/expected_failures.yaml``; each entry is asserted, so the table shrinks
only when the schema or the migration learns the feature.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from schema_corpus import or_absent

from srt_schema.errors import RecipeError
from srt_schema.load import load_recipe_text
from srt_schema.migrate import migrate_text
from srt_schema.overrides import expand_variants
from srt_schema.sweep import expand_sweep

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
REPO = PACKAGE.parents[1]
FAILURES_FILE = HERE / "data" / "migrate" / "expected_failures.yaml"

pytestmark = pytest.mark.corpus


def schema_file() -> Path:
    for candidate in (
        PACKAGE / "src" / "srt_schema" / "schemas" / "recipe.schema.json",
        PACKAGE / "schema" / "recipe.schema.json",
    ):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"recipe.schema.json not found under {PACKAGE}")


def corpus_root() -> Path:
    configured = os.environ.get("SRT_CORPUS")
    root = Path(configured) if configured else REPO.parent / "shared" / "corpus"
    return root.resolve()


def v1_files() -> list[Path]:
    root = corpus_root() / "v1"
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml"))


def v1_cases() -> list[Any]:
    return or_absent([pytest.param(p, id=corpus_id(p)) for p in v1_files()])


def corpus_id(path: Path) -> str:
    return path.relative_to(corpus_root() / "v1").as_posix()


# ----------------------------------------- expansion (docs/recipes.md#override-files, #sweeps)


def expand_overrides(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Variant suffix -> resolved recipe (base included), for a plain recipe ``{"": recipe}``."""
    if "base" not in document:
        return {"": document}
    variants = {v.suffix: v.document for v in expand_variants(document, file="m", selector="base")}
    for variant in expand_variants(document, file="m", selector=None):
        variants[variant.suffix] = variant.document
    return variants


def first_sweep_point(recipe: dict[str, Any]) -> dict[str, Any]:
    """The recipe with its ``sweep`` replaced by the first grid point (docs/recipes.md#sweeps)."""
    if not isinstance(recipe.get("sweep"), dict):
        return recipe
    return expand_sweep(recipe, file="m")[0].document


# ----------------------------------------------------------------------------- checks


@functools.cache
def schema_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_file().read_text())
    return jsonschema.Draft202012Validator(schema)


@functools.cache
def recipe_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_file().read_text())
    return jsonschema.Draft202012Validator({"$ref": "#/$defs/Recipe", "$defs": schema["$defs"]})


def json_path(error: jsonschema.ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def schema_errors(text: str) -> list[str]:
    """``<variant>: <$.path>: <message>`` for every JSON-Schema error of the migrated text."""
    document = yaml.safe_load(text)
    whole = first_sweep_point(document)
    if isinstance(whole.get("base"), dict):
        whole = {**whole, "base": first_sweep_point(whole["base"])}
    found = [f"(file): {json_path(e)}: {e.message}" for e in schema_validator().iter_errors(whole)]
    for suffix, variant in expand_overrides(document).items():
        resolved = first_sweep_point(variant)
        for error in recipe_validator().iter_errors(resolved):
            found.append(f"{suffix or '(recipe)'}: {json_path(error)}: {error.message}")
    return sorted(set(found))


# Checks the JSON Schema cannot express but the schema-2 loader makes
# (docs/recipes.md#engine-and-roles, #validation-catalogue); they are written from the spec,
# independently of the migration code.
REGISTERED_BENCHMARKS = frozenset(
    {"manual", "sa-bench", "sglang-bench", "gsm8k", "mmlu", "gpqa", "longbenchv2", "lm-eval",
     "router", "mooncake-router", "trace-replay", "agentperf", "custom"}
)  # fmt: skip
FRONTENDS = frozenset(
    {"dynamo", "sglang-router", "vllm-router", "atomesh", "tilert-router", "sglang", "vllm",
     "trtllm_serve", "none"}
)  # fmt: skip
V1_ONLY_TOP = ("backend", "infra")
V1_ONLY_NESTED = {
    "resources": {
        *(
            f"{r}_{f}"
            for r in ("prefill", "decode", "agg")
            for f in ("nodes", "workers", "critical")
        ),
        *(f"gpus_per_{r}" for r in ("prefill", "decode", "agg")),
    },
    "frontend": {"orchestrator_placement", "dedicated_node"},
    "benchmark": {"client_placement", "client_dedicated_node"},
    "dynamo": {"version", "hash", "wheel", "cargo_patches"},
}


def v1_only_keys(section: dict[str, Any]) -> list[str]:
    found = [key for key in V1_ONLY_TOP if key in section]
    for block, keys in V1_ONLY_NESTED.items():
        if isinstance(section.get(block), dict):
            found += [f"{block}.{key}" for key in section[block] if key in keys]
    return found


# Keys schema 2 retired under a new name or unit (docs/recipes.md#retired-keys); early schema-2
# files still carry some of them (`engine.set_cuda_visible_devices`), and migrate renames them.
RETIRED_NESTED = {
    "engine": {"set_cuda_visible_devices"},
    "telemetry": {"default_frequency"},
    "benchmark": {"export_node_metrics"},
}


def retired_keys(section: dict[str, Any]) -> list[str]:
    found = []
    for block, keys in RETIRED_NESTED.items():
        if isinstance(section.get(block), dict):
            found += [f"{block}.{key}" for key in section[block] if key in keys]
    tachometer = (section.get("observability") or {}).get("tachometer") or {}
    if "default_frequency" in tachometer:
        found.append("observability.tachometer.default_frequency")
    return found


def loader_errors(recipe: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    bench = (recipe.get("benchmark") or {}).get("type", "manual")
    if bench not in REGISTERED_BENCHMARKS:
        errors.append(f"$.benchmark.type: Unknown benchmark.type {bench!r}")
    frontend = (recipe.get("frontend") or {}).get("type", "dynamo")
    if frontend not in FRONTENDS:
        errors.append(f"$.frontend.type: Unknown frontend.type {frontend!r}")
    engine = recipe.get("engine") or "sglang"
    engine_type = engine.get("type", "sglang") if isinstance(engine, dict) else engine
    roles = recipe.get("roles") or {}
    for name, role in roles.items():
        if name not in ("prefill", "decode", "agg"):
            errors.append(f"$.roles.{name}: unknown role {name!r}")
        if "extra_args" in role and engine_type != "trtllm":
            errors.append(f"$.roles.{name}.extra_args is only supported by the trtllm engine")
        if role.get("kv_events") is not None and engine_type not in ("sglang", "vllm"):
            errors.append(f"$.roles.{name}.kv_events is not supported by the {engine_type} engine")
        if role.get("nodes") == 0 or role.get("nodes") is True:
            errors.append(f"$.roles.{name}.nodes: {role['nodes']!r} is not accepted")
    if (roles.get("decode") or {}).get("nodes") == "colocate":
        missing = [r for r in ("prefill", "decode") if (roles.get(r) or {}).get("gpus") is None]
        if missing:
            errors.append(f"$.roles.decode.nodes: colocate requires gpus (missing on {missing})")
    if "agg" in roles and ("prefill" in roles or "decode" in roles):
        errors.append("$.roles: agg cannot be combined with prefill/decode")
    return errors


def loader_problems(text: str) -> list[str]:
    document = yaml.safe_load(text)
    return [
        f"{suffix or '(recipe)'}: {error}"
        for suffix, variant in expand_overrides(document).items()
        for error in loader_errors(first_sweep_point(variant))
    ]


def problems(text: str) -> dict[str, list[str]]:
    """Every way the migrated text fails, by stage: the JSON Schema, the loader's own checks."""
    return {"schema": schema_errors(text), "loader": loader_problems(text)}


def expected_failures() -> dict[str, dict[str, str]]:
    table = yaml.safe_load(FAILURES_FILE.read_text())
    assert isinstance(table, dict)
    return table


# ----------------------------------------------------------------------------- tests


def test_corpus_has_every_v1_file_of_the_index() -> None:
    index = (corpus_root() / "INDEX.md").read_text()
    listed = {
        f"{cells[2]}/{cells[3]}"
        for line in index.splitlines()
        if (cells := [c.strip() for c in line.split("|")]) and len(cells) > 4 and cells[1] == "v1"
    }
    assert listed == {corpus_id(path) for path in v1_files()}
    assert len(listed) == 94


def test_expected_failures_name_corpus_files_with_a_known_stage() -> None:
    files = {corpus_id(path) for path in v1_files()}
    for name, entry in expected_failures().items():
        assert name in files, name
        assert entry["stage"] in ("schema", "loader", "validate"), name
        assert entry["match"] and entry["reason"] and entry["keys"], name


@pytest.mark.parametrize("path", v1_cases())
def test_v1_corpus_file_migrates_to_a_valid_schema_2_recipe(path: Path) -> None:
    text = path.read_text()
    result = migrate_text(text, file=str(path))
    assert result.changed
    assert (result.from_version, result.to_version) == (1, 2)
    assert "set schema: 2" in result.notes
    document = yaml.safe_load(result.text)
    assert next(iter(document)) == "schema"
    assert document["schema"] == 2
    for suffix, variant in expand_overrides(document).items():
        assert v1_only_keys(variant) == [], suffix
    entry = expected_failures().get(corpus_id(path))
    found = problems(result.text)
    if entry is None or entry["stage"] == "validate":
        assert found == {"schema": [], "loader": []}
        return
    at = f": {entry['path']}: "
    hits = [line for line in found[entry["stage"]] if at in line and entry["match"] in line]
    assert hits, found
    assert all(key in hits[0] for key in entry["keys"]), (hits[0], entry["keys"])


@pytest.mark.parametrize("path", v1_cases())
def test_migrating_a_migrated_corpus_file_changes_nothing(path: Path) -> None:
    once = migrate_text(path.read_text(), file=str(path))
    twice = migrate_text(once.text, file=str(path))
    assert twice.text == once.text
    assert (twice.changed, twice.from_version, twice.notes) == (False, 2, ("already current",))


# Half-migrated v2 files whose v1 keys migrate away but that a cross-field rule then refuses (the
# first issue's path). None today: power-noprof (power telemetry) loads since srt plans it.
MIGRATED_V2_REFUSED: dict[str, str] = {}


def v2_files() -> list[Path]:
    root = corpus_root() / "v2"
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml"))


def v2_id(path: Path) -> str:
    return path.relative_to(corpus_root() / "v2").as_posix()


def v2_cases() -> list[Any]:
    return or_absent([pytest.param(p, id=v2_id(p)) for p in v2_files()])


@pytest.mark.parametrize("path", v2_cases())
def test_v2_corpus_file_is_current_or_loses_its_v1_keys(path: Path) -> None:
    """``schema: 2`` files are returned untouched unless they still carry v1-only or retired
    keys."""
    text = path.read_text()
    document = yaml.safe_load(text)
    legacy = [
        key
        for variant in expand_overrides(document).values()
        for key in (*v1_only_keys(variant), *retired_keys(variant))
    ]
    result = migrate_text(text, file=str(path))
    assert result.from_version == 2
    if not legacy:
        assert (result.text, result.changed, result.notes) == (text, False, ("already current",))
        return
    assert result.changed
    migrated = yaml.safe_load(result.text)
    assert [k for v in expand_overrides(migrated).values() for k in v1_only_keys(v)] == []
    assert [k for v in expand_overrides(migrated).values() for k in retired_keys(v)] == []
    assert problems(result.text) == {"schema": [], "loader": []}
    refused = MIGRATED_V2_REFUSED.get(v2_id(path))
    if refused is None:
        assert load_recipe_text(result.text, file=v2_id(path))
        return
    with pytest.raises(RecipeError) as caught:
        load_recipe_text(result.text, file=v2_id(path))
    assert caught.value.issues[0].path == refused, caught.value.issues


# ----------------------------------------------------------------------------- same meaning
# Like the reference's `migrate --verify`: expand the v1 file and the migrated file the same way
# and compare what each variant asks for, read the v1 way and the schema-2 way respectively.

ROLE_MODES = (("prefill", "prefill"), ("decode", "decode"), ("agg", "aggregated"))
UNTOUCHED = (
    "name", "model", "slurm", "environment", "health_check", "identity", "extra_mount",
    "srun_options", "sbatch_directives", "setup_script", "profiling", "telemetry", "sweep",
)  # fmt: skip


def v1_meaning(recipe: dict[str, Any]) -> dict[str, Any]:
    resources = recipe.get("resources") or {}
    backend = recipe.get("backend") or {}
    engine = backend.get("type") or next(
        (
            k.removesuffix("_config")
            for k in backend
            if k.endswith("_config") and k != "kv_events_config"
        ),
        "sglang",
    )
    roles: dict[str, dict[str, Any]] = {}
    for role, mode in ROLE_MODES:
        found = {
            "nodes": resources.get(f"{role}_nodes"),
            "workers": resources.get(f"{role}_workers"),
            "gpus": resources.get(f"gpus_per_{role}"),
            "critical": resources.get(f"{role}_critical"),
            "env": backend.get(f"{mode}_environment"),
            "extra_args": backend.get(f"{mode}_extra_args"),
            "args": (backend.get(f"{engine}_config") or {}).get(mode),
        }
        if role == "decode" and found["nodes"] == 0:
            found["nodes"] = "colocate"
        found = {key: value for key, value in found.items() if value is not None}
        if found:
            roles[role] = found
    dynamo = dict(recipe.get("dynamo") or {})
    source = None
    if dynamo.get("hash") is not None:
        source = {"rev": dynamo["hash"]}
        if dynamo.get("cargo_patches") is not None:
            source["patches"] = dynamo["cargo_patches"]
    elif dynamo.get("wheel") is not None:
        source = {"wheel": dynamo["wheel"]}
    elif dynamo.get("version") is not None:
        source = {"pypi": dynamo["version"]}
    frontend = recipe.get("frontend") or {}
    return {
        "engine": engine,
        "roles": roles,
        "source": source,
        "frontend": {"sglang": "sglang-router"}.get(frontend.get("type"), frontend.get("type")),
        "untouched": {key: recipe.get(key) for key in UNTOUCHED},
    }


def v2_meaning(recipe: dict[str, Any], v1_roles: dict[str, Any]) -> dict[str, Any]:
    engine = recipe.get("engine") or "sglang"
    roles = {
        role: {key: value for key, value in fields.items() if key in v1_roles.get(role, {})}
        for role, fields in (recipe.get("roles") or {}).items()
    }
    return {
        "engine": engine.get("type", "sglang") if isinstance(engine, dict) else engine,
        "roles": roles,
        "source": (recipe.get("dynamo") or {}).get("source"),
        "frontend": (recipe.get("frontend") or {}).get("type"),
        "untouched": {key: recipe.get(key) for key in UNTOUCHED},
    }


@pytest.mark.parametrize("path", v1_cases())
def test_migration_keeps_what_each_variant_asks_for(path: Path) -> None:
    text = path.read_text()
    before = expand_overrides(yaml.safe_load(text))
    after = expand_overrides(yaml.safe_load(migrate_text(text, file=str(path)).text))
    assert before.keys() == after.keys()
    for suffix, v1_recipe in before.items():
        old = v1_meaning(first_sweep_point(v1_recipe))
        new = v2_meaning(first_sweep_point(after[suffix]), old["roles"])
        old["untouched"].pop("sweep"), new["untouched"].pop("sweep")
        assert new == old, suffix


# ----------------------------------------------------------------------------- the real loader


@pytest.mark.parametrize("path", v1_cases())
def test_migrated_corpus_file_loads_with_the_schema_2_loader(path: Path) -> None:
    """The loader accepts every migrated file, except the table's, which it rejects as listed.

    A table entry is met when the loader reports issues under ``path`` that name every ``keys``.
    """
    name = corpus_id(path)
    text = migrate_text(path.read_text(), file=name).text
    entry = expected_failures().get(name)
    if entry is None:
        assert load_recipe_text(text, file=name)
        return
    with pytest.raises(RecipeError) as caught:
        load_recipe_text(text, file=name)
    root = entry["path"]
    under = [
        issue.message.lower()
        for issue in caught.value.issues
        if root == "$" or issue.path == root or issue.path.startswith(root + ".")
    ]
    for key in entry["keys"]:
        assert any(str(key).lower() in message for message in under), (key, caught.value.issues)
    if entry["stage"] == "validate":
        assert any(entry["match"].lower() in message for message in under), caught.value.issues


if __name__ == "__main__":  # a quick report while developing: python tests/test_migrate_corpus.py
    for path in v1_files():
        result = migrate_text(path.read_text(), file=str(path))
        errors = [line for lines in problems(result.text).values() for line in lines]
        print(("OK  " if not errors else "FAIL") + " " + corpus_id(path))
        for line in errors[:6]:
            print("      " + line[:220])

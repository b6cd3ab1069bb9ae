"""``docs/schema-ledger.md`` covers every schema field, and every row is true.

The leaf list is derived from ``recipe.schema.json`` (``#/$defs/Recipe``) and
``cluster.schema.json``: ``$ref``, ``anyOf``/``oneOf`` branches, ``items`` (``[]``) and
``additionalProperties`` objects (``*``) are walked, recursion guarded. A row is checked by status:

- ``executed``: every cited test (``path::function`` or ``path::Class::method``) exists (by
  ``ast``, no test module is imported); a row citing the golden-plan test names a field that a
  golden input actually sets: one the project owns (``examples/*.yaml``, ``tests/recipes/*.yaml``)
  or, for the rows ``corpus_only_golden_fields`` lists, a schema-valid v2 corpus recipe (those
  rows are checked by the ``corpus`` tier: ``test_corpus_only_golden_rows_are_set_by_the_corpus``);
- ``refused``: the flow-mapping fragment, merged into ``examples/quickstart.yaml`` (recipe) or a
  minimal ``srtslurm.yaml`` (cluster), is refused by the load pipeline ``srtctl validate`` runs,
  with an issue at the field's ``$.path`` that says what to do instead;
- ``no-op``: the reason is given.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from srt_schema.clusterconfig import parse_cluster_config
from srt_schema.errors import SchemaError
from srt_schema.load import load_recipe_text
from srt_schema.overrides import deep_merge

REPO = Path(__file__).resolve().parents[1]
LEDGER = REPO / "docs" / "schema-ledger.md"
SCHEMAS = REPO / "packages" / "srt-schema" / "schema"
CORPUS = Path(os.environ.get("SRT_CORPUS", str(REPO.parent / "shared" / "corpus")))
GOLDEN_TEST = "packages/srt-planner/tests/test_golden.py::test_golden"
STATUSES = ("executed", "refused", "no-op")
MINIMAL_CLUSTER = {"default_account": "acct", "default_partition": "batch"}
#: Words by which a refusal says what to do instead.
REMEDY = re.compile(r"\b(remove|use|set|pin|write|point|drop|add)\b")
TEST_ID = re.compile(r"[\w./-]+\.py::\w+(?:::\w+)?")


# -- the schema's leaves ---------------------------------------------------------------------


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    seen: set[str] = set()
    while "$ref" in node and node["$ref"] not in seen:
        seen.add(node["$ref"])
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _structured(node: dict[str, Any], root: dict[str, Any]) -> bool:
    """Whether ``node`` (resolved) has named fields below it, directly or in a branch."""
    node = _resolve(node, root)
    if "properties" in node:
        return True
    if any(_structured(b, root) for b in node.get("anyOf", []) + node.get("oneOf", [])):
        return True
    for key in ("items", "additionalProperties"):
        sub = node.get(key)
        if isinstance(sub, dict) and "properties" in _resolve(sub, root):
            return True
    return False


def schema_leaves(root: dict[str, Any], start: dict[str, Any]) -> set[str]:
    """Every leaf field a user can write, as a dotted path (``roles.*.args``, ``a[].b``)."""
    out: set[str] = set()

    def walk(node: dict[str, Any], path: str, stack: frozenset[int]) -> None:
        node = _resolve(node, root)
        if id(node) in stack:  # a recursive definition: the path itself is the leaf
            out.add(path)
            return
        stack = stack | {id(node)}
        leaf_branch = False
        for name, sub in node.get("properties", {}).items():
            walk(sub, f"{path}.{name}" if path else name, stack)
        for key, suffix in (("additionalProperties", ".*"), ("items", "[]")):
            sub = node.get(key)
            if isinstance(sub, dict) and _structured(sub, root):
                walk(sub, path + suffix, stack)
        for branch in node.get("anyOf", []) + node.get("oneOf", []):
            resolved = _resolve(branch, root)
            if _structured(resolved, root):
                walk(resolved, path, stack)
            elif resolved.get("type") != "null":
                leaf_branch = True  # e.g. `engine: sglang` next to the engine objects
        if path and (leaf_branch or not _structured(node, root)):
            out.add(path)

    walk(start, "", frozenset())
    return out


def recipe_leaves() -> set[str]:
    schema = json.loads((SCHEMAS / "recipe.schema.json").read_text())
    return schema_leaves(schema, schema["$defs"]["Recipe"])


def cluster_leaves() -> set[str]:
    schema = json.loads((SCHEMAS / "cluster.schema.json").read_text())
    return schema_leaves(schema, schema)


# -- the ledger ------------------------------------------------------------------------------


def ledger_tables() -> dict[str, list[tuple[int, str, str, str]]]:
    """``{"recipe": [(line, field, status, evidence)], "cluster": [...]}``."""
    tables: dict[str, list[tuple[int, str, str, str]]] = {"recipe": [], "cluster": []}
    current: str | None = None
    for number, line in enumerate(LEDGER.read_text().splitlines(), start=1):
        if line.startswith("## "):
            heading = line[3:].strip().lower()
            current = (
                "recipe"
                if heading.startswith("recipe")
                else "cluster"
                if heading.startswith("srtslurm")
                else None
            )
            continue
        if current is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("field", "") or set(cells[0]) <= {"-", ":"}:
            continue
        tables[current].append((number, cells[0].strip("`"), cells[1], cells[2]))
    return tables


# -- golden inputs ---------------------------------------------------------------------------


def _owned_inputs() -> list[Path]:
    """The golden inputs the project owns (test_golden.py's ordinary tier)."""
    return sorted((REPO / "examples").glob("*.yaml")) + sorted(
        (REPO / "tests" / "recipes").glob("*.yaml")
    )


def _corpus_inputs() -> list[Path]:
    """The schema-valid v2 corpus recipes (test_golden.py's corpus tier); empty without it."""
    found: list[Path] = []
    index = CORPUS / "INDEX.md"
    if index.is_file():
        for line in index.read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 10 and cells[0] == "v2" and cells[-1] == "yes":
                found.append(CORPUS / "v2" / cells[1] / cells[2])
    return found


@cache
def _golden_documents(corpus: bool) -> tuple[Any, ...]:
    paths = _corpus_inputs() if corpus else _owned_inputs()
    return tuple(yaml.safe_load(p.read_text()) for p in paths)


def _roots(doc: Any) -> Iterator[Any]:
    """The recipe, and in an override file its base and every variant."""
    yield doc
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "base" or re.match(r"^(zip_)?override_", str(key)):
                yield from value if isinstance(value, list) else [value]


def _sets(node: Any, parts: list[str]) -> bool:
    if not parts:
        return True
    head, rest = parts[0], parts[1:]
    if head == "*":
        return isinstance(node, dict) and any(_sets(v, rest) for v in node.values())
    if head == "[]":
        return isinstance(node, list) and any(_sets(v, rest) for v in node)
    return isinstance(node, dict) and head in node and _sets(node[head], rest)


def _parts(field: str) -> list[str]:
    return [p for part in field.split(".") for p in re.split(r"(\[\])", part) if p]


def set_by_a_golden_input(field: str, *, corpus: bool) -> bool:
    """Whether an owned golden input (or, with ``corpus``, a corpus one) sets ``field``."""
    parts = _parts(field)
    return any(_sets(root, parts) for doc in _golden_documents(corpus) for root in _roots(doc))


# -- evidence --------------------------------------------------------------------------------


@cache
def _test_names(path: str) -> frozenset[str]:
    tree = ast.parse((REPO / path).read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(
                f"{node.name}::{m.name}"
                for m in node.body
                if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
            )
    return frozenset(names)


def _executed_problems(field: str, evidence: str) -> list[str]:
    ids = TEST_ID.findall(evidence)
    if not ids:
        return ["names no test (want path/to/test_x.py::test_name)"]
    problems = []
    for test_id in ids:
        path, name = test_id.split("::", 1)
        if not (REPO / path).is_file():
            problems.append(f"{test_id}: no such test file")
        elif name not in _test_names(path):
            problems.append(f"{test_id}: no such test function in {path}")
    # A field only corpus recipes set is checked here when the corpus is present, and without it
    # by the corpus tier's test_corpus_only_golden_rows_are_set_by_the_corpus (never passed over).
    if (
        GOLDEN_TEST in ids
        and not set_by_a_golden_input(field, corpus=False)
        and _corpus_inputs()
        and not set_by_a_golden_input(field, corpus=True)
    ):
        problems.append(f"cites {GOLDEN_TEST}, but no golden input sets {field}")
    return problems


def _field_pattern(field: str) -> re.Pattern[str]:
    body = re.escape(field).replace(r"\*", r"[^.\[]+").replace(r"\[\]", r"\[\d+\]")
    return re.compile(rf"^\$\.{body}$")


@cache
def _quickstart() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((REPO / "examples" / "quickstart.yaml").read_text())
    return doc


def _refusal_problems(table: str, field: str, evidence: str) -> list[str]:
    fragment_text, sep, reason = evidence.partition(" - ")
    if not sep or not reason.strip():
        return ["evidence must be `{fragment} - reason`"]
    try:
        fragment = yaml.safe_load(fragment_text.strip().strip("`"))
    except yaml.YAMLError as exc:
        return [f"fragment is not YAML: {exc}"]
    if not isinstance(fragment, dict):
        return ["fragment must be a YAML flow mapping"]
    try:
        if table == "recipe":
            cluster = parse_cluster_config(yaml.safe_dump(MINIMAL_CLUSTER), file="srtslurm.yaml")
            doc = deep_merge(copy.deepcopy(_quickstart()), fragment)
            load_recipe_text(yaml.safe_dump(doc), file="examples/quickstart.yaml", cluster=cluster)
        else:
            doc = deep_merge(copy.deepcopy(MINIMAL_CLUSTER), fragment)
            parse_cluster_config(yaml.safe_dump(doc), file="srtslurm.yaml")
    except SchemaError as exc:
        issues = getattr(exc, "issues", ())
        pattern = _field_pattern(field)
        hits = [i for i in issues if pattern.match(i.path)]
        if not hits:
            return [f"refused, but no issue at $.{field}: {exc}"]
        if not any(REMEDY.search(i.message) for i in hits):
            return [f"the refusal does not say what to do instead: {hits[0].message}"]
        return []
    return ["the fragment validates; a refused field must be refused by srtctl validate"]


def _row_problems(table: str, field: str, status: str, evidence: str) -> list[str]:
    if status not in STATUSES:
        return [f"status {status!r} is not one of {', '.join(STATUSES)}"]
    if status == "executed":
        return _executed_problems(field, evidence)
    if status == "refused":
        return _refusal_problems(table, field, evidence)
    return [] if evidence else ["a no-op row needs the reason it has no effect"]


# -- the tests -------------------------------------------------------------------------------


def _check(table: str, leaves: set[str]) -> list[str]:
    rows = ledger_tables()[table]
    problems: list[str] = []
    seen: dict[str, int] = {}
    for line, field, status, evidence in rows:
        where = f"docs/schema-ledger.md:{line}: {field}"
        if field in seen:
            problems.append(f"{where}: duplicate row (first at line {seen[field]})")
        seen.setdefault(field, line)
        if field not in leaves:
            problems.append(f"{where}: names no leaf of the {table} schema")
            continue
        problems.extend(f"{where}: {p}" for p in _row_problems(table, field, status, evidence))
    problems.extend(
        f"docs/schema-ledger.md: {field}: a {table} schema leaf without a row"
        for field in sorted(leaves - set(seen))
    )
    return problems


def test_the_walk_finds_the_known_shapes() -> None:
    leaves = recipe_leaves()
    for field in (
        "engine",
        "engine.kv_cache_dtype",
        "roles.*.args",
        "roles.*.engine.served_model_name",
        "services[].source.git",
        "services[].metrics.port",
        "services[].metrics[].port",
        "telemetry.cpu_power.source",
    ):
        assert field in leaves, field
    assert "telemetry" not in leaves and "reporting" not in leaves
    assert "reporting.s3.bucket" in cluster_leaves()


def test_every_recipe_field_has_a_true_row() -> None:
    problems = _check("recipe", recipe_leaves())
    assert not problems, f"{len(problems)} ledger problem(s):\n" + "\n".join(problems)


def test_every_cluster_field_has_a_true_row() -> None:
    problems = _check("cluster", cluster_leaves())
    assert not problems, f"{len(problems)} ledger problem(s):\n" + "\n".join(problems)


def corpus_only_golden_fields() -> list[str]:
    """Ledger rows whose golden evidence only a corpus recipe provides (none of ours sets them)."""
    fields = []
    for line in LEDGER.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and GOLDEN_TEST in TEST_ID.findall(cells[-1]):
            field = cells[0].strip("`")
            if not set_by_a_golden_input(field, corpus=False):
                fields.append(field)
    return fields


def test_owned_recipes_are_golden_evidence() -> None:
    """tests/recipes/ is read: a field only our own recipes set counts as golden evidence."""
    assert set_by_a_golden_input("roles.*.engine", corpus=False)  # tests/recipes/tilert-*
    assert set_by_a_golden_input("services[].command", corpus=False)  # tests/recipes/none-*
    assert not set_by_a_golden_input("no_such_field", corpus=False)


@pytest.mark.corpus
def test_corpus_only_golden_rows_are_set_by_the_corpus() -> None:
    missing = [f for f in corpus_only_golden_fields() if not set_by_a_golden_input(f, corpus=True)]
    assert not missing, f"cite {GOLDEN_TEST} but no golden input sets them: {missing}"

"""Property tests: dump/load round trips, and mutated corpus recipes are always refused cleanly.

The mutation oracle is independent of our loader: ``jsonschema`` decides that a mutated value
violates the team's JSON Schema, and our pipeline must then raise a RecipeError (never accept
it, never crash with another exception).
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schema_corpus import corpus_index, corpus_root

from srt_schema import RecipeError, dump_recipe, load_recipe_document, recipe_from
from srt_schema.schemas import load_schema
from srt_schema.yamlio import parse_yaml

SCHEMA = load_schema("recipe")
DEFS: dict[str, Any] = SCHEMA["$defs"]


# -- generated recipes ---------------------------------------------------------------------------
@st.composite
def recipes(draw: st.DrawFn) -> dict[str, Any]:
    gpn = draw(st.sampled_from([1, 2, 4, 8]))
    engine = draw(st.sampled_from(["sglang", "vllm", "trtllm", "mocker"]))
    doc: dict[str, Any] = {
        "schema": 2,
        "name": draw(st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)),
        "model": {"path": "/m", "container": "img:1", "precision": "fp8"},
        "resources": {"gpus_per_node": gpn},
    }
    if draw(st.booleans()):
        doc["engine"] = {"type": engine} if draw(st.booleans()) else engine
    else:
        doc["engine"] = {"type": "mocker", "speedup_ratio": draw(st.floats(1, 1000))}
    if draw(st.booleans()):
        doc["roles"] = {
            "agg": {"nodes": draw(st.integers(1, 4)), "workers": draw(st.integers(1, 8))}
        }
    else:
        doc["roles"] = {
            "prefill": {"nodes": draw(st.integers(1, 3)), "workers": draw(st.integers(1, 3))},
            "decode": {"nodes": draw(st.integers(1, 3)), "workers": draw(st.integers(1, 3))},
        }
    for role in doc["roles"].values():
        if draw(st.booleans()):
            role["env"] = draw(
                st.dictionaries(
                    st.from_regex(r"[A-Z]{1,4}", fullmatch=True), st.text(max_size=5), max_size=2
                )
            )
        if draw(st.booleans()):
            role["restart"] = draw(
                st.sampled_from(["never", "on-failure", {"policy": "always", "max_restarts": 2}])
            )
    concurrencies = draw(st.lists(st.integers(1, 512), min_size=1, max_size=4, unique=True))
    doc["benchmark"] = {
        "type": "sa-bench",
        "isl": draw(st.integers(1, 4096)),
        "osl": draw(st.integers(1, 4096)),
        "concurrencies": concurrencies,
    }
    if draw(st.booleans()):
        doc["health_check"] = {"max_attempts": draw(st.integers(1, 500))}
    return doc


@given(recipes())
@settings(max_examples=200, deadline=None)
def test_load_dump_load_is_stable(doc: dict[str, Any]) -> None:
    [job] = load_recipe_document(doc, file="gen.yaml")
    again = recipe_from(dump_recipe(job.recipe), file="dump.yaml")
    assert again == job.recipe
    assert dump_recipe(again) == dump_recipe(job.recipe)


# -- mutations of corpus recipes -----------------------------------------------------------------
def _corpus_docs() -> list[dict[str, Any]]:
    docs = []
    for row in corpus_index():
        if row["layout"] != "v2" or row["valid"] != "yes":
            continue
        raw = parse_yaml((corpus_root() / "v2" / row["rel"]).read_text(), file=row["rel"])
        if "base" in raw or "sweep" in raw:
            continue
        try:
            load_recipe_document(raw, file=row["rel"])
        except RecipeError:
            continue
        docs.append(raw)
    return docs


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = DEFS[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _strict_slots(
    value: Any, node: dict[str, Any], path: tuple[Any, ...]
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Every position whose schema constrains the value (free-form mappings are skipped)."""
    node = _resolve(node)
    out = [(path, node)] if path else []
    if isinstance(value, dict):
        options = [_resolve(o) for o in node.get("anyOf", [node])]
        objects = [o for o in options if "properties" in o]
        tagged = [
            o for o in objects if o["properties"].get("type", {}).get("enum") == [value.get("type")]
        ]
        obj = tagged[0] if tagged else (objects[0] if len(objects) == 1 else None)
        if obj is not None:
            for key, item in value.items():
                if key in obj["properties"]:
                    out.extend(_strict_slots(item, obj["properties"][key], (*path, key)))
    return out


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


_BAD_VALUES: list[Any] = ["zz-bogus", 123457, True, 1.5, [1, "x"], {"zz": 1}, None]


def _violates(node: dict[str, Any], value: Any) -> bool:
    validator = jsonschema.Draft202012Validator({**node, "$defs": DEFS})
    return not validator.is_valid(value)


@st.composite
def mutations(draw: st.DrawFn, docs: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    doc = copy.deepcopy(draw(st.sampled_from(docs)))
    kind = draw(st.sampled_from(["wrong-type", "unknown-key", "delete-required", "bad-enum"]))
    if kind == "delete-required":
        key = draw(st.sampled_from(["name", "model", "resources", "schema"]))
        doc.pop(key, None)
        return doc, kind
    slots = _strict_slots(doc, DEFS["Recipe"], ())
    if kind == "unknown-key":
        mappings = [(p, n) for p, n in slots if isinstance(_get(doc, p), dict) and _closed(n)]
        path, _ = draw(st.sampled_from([((), DEFS["Recipe"]), *mappings]))
        target = _get(doc, path)
        target["zz_" + draw(st.from_regex(r"[a-z]{1,6}", fullmatch=True))] = 1
        return doc, kind
    if kind == "bad-enum":
        enums = [(p, n) for p, n in slots if "enum" in n]
        if enums:
            path, _ = draw(st.sampled_from(enums))
            _set(doc, path, "zz-not-a-member")
            return doc, kind
    path, node = draw(st.sampled_from(slots))
    candidates = [v for v in _BAD_VALUES if _violates(node, v)]
    if not candidates:  # a slot that accepts anything we can offer: mutate the name instead
        doc["name"] = 42
        return doc, "wrong-type"
    _set(doc, path, draw(st.sampled_from(candidates)))
    return doc, "wrong-type"


def _get(doc: dict[str, Any], path: tuple[Any, ...]) -> Any:
    node: Any = doc
    for key in path:
        node = node[key]
    return node


def _closed(node: dict[str, Any]) -> bool:
    options = [_resolve(o) for o in node.get("anyOf", [node])]
    return any(o.get("additionalProperties") is False and "properties" in o for o in options)


CORPUS_DOCS = _corpus_docs()


@pytest.mark.corpus
def test_the_mutation_base_is_not_empty() -> None:
    assert len(CORPUS_DOCS) >= 30


@pytest.mark.corpus
@given(mutations(CORPUS_DOCS))
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_invalid_mutations_are_refused_with_a_recipe_error(
    case: tuple[dict[str, Any], str],
) -> None:
    doc, kind = case
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(doc), kind
    with pytest.raises(RecipeError):
        load_recipe_document(doc, file="mutant.yaml")


@pytest.mark.corpus
@given(st.sampled_from(CORPUS_DOCS), st.data())
@settings(max_examples=300, deadline=None)
def test_arbitrary_leaf_changes_never_crash(doc: dict[str, Any], data: st.DataObject) -> None:
    doc = copy.deepcopy(doc)
    slots = _strict_slots(doc, DEFS["Recipe"], ())
    path, _ = data.draw(st.sampled_from(slots))
    _set(
        doc,
        path,
        data.draw(st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3), st.booleans())),
    )
    with contextlib.suppress(RecipeError):
        load_recipe_document(doc, file="mutant.yaml")


@pytest.mark.corpus
def test_corpus_path_is_the_one_the_other_tests_use(corpus: Path) -> None:
    assert (corpus / "INDEX.md").is_file()

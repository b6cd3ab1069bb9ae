"""Generate the msgspec structs of srt_schema from the team's JSON Schemas.

    python packages/srt-schema/scripts/generate_structs.py          # rewrite the modules
    python packages/srt-schema/scripts/generate_structs.py --check  # exit 1 if they differ

Inputs: ``packages/srt-schema/schema/{recipe,cluster}.schema.json``.
Outputs: ``packages/srt-schema/src/srt_schema/{recipe,cluster}.py`` (committed, never hand-edited).

Mapping rules (JSON Schema -> Python type annotation):
- ``string``/``integer``/``number``/``boolean``/``null`` -> ``str``/``int``/``float``/``bool``/
  ``None``
- ``enum`` -> ``Literal[...]``; ``anyOf`` -> a union; ``$ref`` -> the struct of that name
- ``array`` -> ``tuple[T, ...]`` (frozen values); ``object`` with ``additionalProperties`` ->
  ``dict[str, T]``; an ``object`` with neither ``properties`` nor ``additionalProperties`` is
  free-form: ``dict[str, Any]``
- Structs that appear together in one ``anyOf`` and each pin ``type`` to one value become a tagged
  union (``tag_field="type"``); the pinned ``type`` property is the tag, not a field.
- Property names that are not identifiers keep their wire name (``logging-stream-interval`` ->
  ``logging_stream_interval = msgspec.field(name="logging-stream-interval")``).
- Defaults come from ``default``. A property without one gets: the struct's own defaults for a
  ``$ref`` (when that struct has no required field), ``()`` for an array, ``None`` otherwise, or the
  value in ``PROSE_DEFAULTS`` where the schema states the default only in its description.
"""

from __future__ import annotations

import argparse
import difflib
import json
import keyword
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

PKG = Path(__file__).resolve().parents[1]
SCHEMA_DIR = PKG / "schema"
OUT_DIR = PKG / "src" / "srt_schema"

# Defaults the schema gives only in prose (docs/recipes.md#schema-defaults confirms each).
PROSE_DEFAULTS: dict[tuple[str, str], Any] = {
    ("OutputConfig", "log_dir"): "./outputs/{job_id}/logs",
    ("RoleConfig", "restart"): "never",
}

# Structs used only as partial documents: every property is optional (None = not given).
PARTIAL_STRUCTS = {"RecipeBase"}

Json = dict[str, Any]


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _py_name(prop: str) -> str:
    name = re.sub(r"[^0-9a-zA-Z_]", "_", prop)
    if keyword.iskeyword(name) or name[0].isdigit():
        name += "_"
    return name


class Generator:
    def __init__(
        self, schema: Json, root_name: str | None, *, shared: dict[str, str] | None = None
    ) -> None:
        #: Definitions another generated module already has, identical: name -> that module.
        self.shared: dict[str, str] = shared or {}
        self.defs: dict[str, Json] = schema.get("$defs", {})
        self.structs: dict[str, Json] = dict(self.defs)
        if root_name is not None:
            self.structs[root_name] = schema
        self.tags: dict[str, str] = self._find_tags()

    # -- analysis -------------------------------------------------------------------------------
    def _find_tags(self) -> dict[str, str]:
        tags: dict[str, str] = {}
        for node in self._walk(list(self.structs.values())):
            refs = [_ref_name(o["$ref"]) for o in node.get("anyOf", []) if "$ref" in o]
            if len(refs) < 2:
                continue
            pinned = {}
            for r in refs:
                enum = self.structs[r].get("properties", {}).get("type", {}).get("enum")
                if enum is not None and len(enum) == 1:
                    pinned[r] = enum[0]
            if len(pinned) == len(refs):
                tags.update(pinned)
        return tags

    def _walk(self, nodes: list[Any]) -> list[Json]:
        out: list[Json] = []
        stack = list(nodes)
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                out.append(node)
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return out

    def _deps(self, name: str) -> set[str]:
        deps: set[str] = set()
        for node in self._walk([self.structs[name].get("properties", {})]):
            ref = node.get("$ref")
            if isinstance(ref, str):
                deps.add(_ref_name(ref))
        deps.discard(name)
        return deps

    def order(self) -> list[str]:
        done: list[str] = []
        seen: set[str] = set()

        def visit(n: str) -> None:
            if n in seen:
                return
            seen.add(n)
            for d in sorted(self._deps(n)):
                visit(d)
            done.append(n)

        for n in sorted(self.structs):
            visit(n)
        return done

    def _all_optional(self, name: str) -> bool:
        return not self.structs[name].get("required")

    # -- rendering ------------------------------------------------------------------------------
    def annotation(self, node: Json) -> str:
        if "$ref" in node:
            return _ref_name(node["$ref"])
        if "anyOf" in node:
            parts: list[str] = []
            for o in node["anyOf"]:
                t = self.annotation(o)
                if t not in parts:
                    parts.append(t)
            if "None" in parts:  # None last reads best
                parts = [p for p in parts if p != "None"] + ["None"]
            return " | ".join(parts)
        if "enum" in node:
            return "Literal[" + ", ".join(json.dumps(v) for v in node["enum"]) + "]"
        kind = node.get("type")
        if kind == "string":
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "null":
            return "None"
        if kind == "array":
            items = node.get("items")
            return f"tuple[{self.annotation(items) if items else 'Any'}, ...]"
        if kind == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                return f"dict[str, {self.annotation(extra)}]"
            return "dict[str, Any]"
        raise ValueError(f"unsupported schema node: {node}")

    def default(self, owner: str, prop: str, node: Json, required: bool) -> str | None:
        """Python source for the default, or None when the field is required."""
        if owner in PARTIAL_STRUCTS:
            return "None"
        if "default" in node:
            return self._literal(node["default"], node)
        if (owner, prop) in PROSE_DEFAULTS:
            return self._literal(PROSE_DEFAULTS[(owner, prop)], node)
        if required:
            return None
        ref = node.get("$ref")
        if ref is not None and self._all_optional(_ref_name(ref)):
            return f"msgspec.field(default_factory={_ref_name(ref)})"
        if node.get("type") == "array":
            return "()"
        return "None"

    def _literal(self, value: Any, node: Json) -> str:
        if isinstance(value, list):
            return "(" + "".join(self._literal(v, {}) + ", " for v in value) + ")"
        if isinstance(value, dict):
            if value:
                raise ValueError(f"non-empty mapping default not supported: {value}")
            return "{}"
        if isinstance(value, float) or (
            isinstance(value, int) and not isinstance(value, bool) and self._is_number(node)
        ):
            return repr(float(value))
        return repr(value)

    def _is_number(self, node: Json) -> bool:
        if node.get("type") == "number":
            return True
        return any(o.get("type") == "number" for o in node.get("anyOf", []))

    def render_struct(self, name: str) -> str:
        node = self.structs[name]
        required = set(node.get("required", []))
        kwargs = ", frozen=True, kw_only=True, forbid_unknown_fields=True"
        if name in self.tags:
            kwargs += f', tag_field="type", tag={json.dumps(self.tags[name])}'
        lines = [f"class {name}(Base{kwargs}):"]
        doc = node.get("description") or name
        lines.append(_docstring(doc, "    "))
        fields: list[tuple[bool, str]] = []
        for prop, pnode in node.get("properties", {}).items():
            if prop == "type" and name in self.tags:
                continue
            ann = self.annotation(pnode)
            dflt = self.default(name, prop, pnode, prop in required)
            if dflt == "None" and not ann.endswith("None"):
                ann += " | None"
            py = _py_name(prop)
            body: list[str] = []
            desc = pnode.get("description")
            if desc:
                body.extend(_comment(desc, "    "))
            if py != prop:
                extra = f", default={dflt}" if dflt is not None else ""
                if dflt is not None and dflt.startswith("msgspec.field("):
                    raise ValueError("renamed field with a factory default")
                body.append(f'    {py}: {ann} = msgspec.field(name="{prop}"{extra})')
            elif dflt is None:
                body.append(f"    {py}: {ann}")
            else:
                body.append(f"    {py}: {ann} = {dflt}")
            fields.append((dflt is None, "\n".join(body)))
        # kw_only structs allow required fields after defaulted ones; keep schema order.
        for _, text in fields:
            lines.append(text)
        if not fields:
            lines.append("    pass")
        return "\n".join(lines)

    def render(self, source: str, title: str) -> str:
        names = self.order()
        body = "\n\n\n".join(self.render_struct(n) for n in names if n not in self.shared)
        imports = ""
        for module in sorted(set(self.shared.values())):
            names_from = sorted(n for n, m in self.shared.items() if m == module)
            imports += f"from {module} import {', '.join(names_from)}\n"
        exported = "".join(f'    "{n}",\n' for n in sorted(names))
        header = (
            f"# GENERATED by packages/srt-schema/scripts/generate_structs.py from {source}.\n"
            "# Do not edit: change the schema and run `make generate`.\n"
            f'"""{title}"""\n\n'
            "# Annotations are evaluated (no postponed annotations): msgspec then builds its\n"
            "# decoders without resolving strings. Structs come in dependency order.\n"
            "from typing import Any, Literal\n\n"
            "import msgspec\n\n"
            "from srt_schema.base import Base\n"
            f"{imports}\n"
            f"__all__ = [\n{exported}]\n\n\n"
        )
        text = header + body + "\n"
        if "Any" not in body:
            text = text.replace("from typing import Any, Literal", "from typing import Literal")
        if "Literal" not in body:
            text = text.replace(", Literal", "").replace("from typing import Literal\n\n", "")
        if "msgspec." not in body:
            text = text.replace("import msgspec\n\n", "")
        return text


def _docstring(text: str, indent: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    wrapped = textwrap.fill(text, width=96, initial_indent="", subsequent_indent=indent)
    if "\n" in wrapped or len(indent) + len(wrapped) + 6 > 100:
        return f'{indent}"""{wrapped}\n{indent}"""\n'
    return f'{indent}"""{wrapped}"""\n'


def _comment(text: str, indent: str) -> list[str]:
    return textwrap.wrap(
        " ".join(text.split()),
        width=100,
        initial_indent=indent + "#: ",
        subsequent_indent=indent + "#: ",
    )


def build() -> dict[Path, str]:
    recipe = json.loads((SCHEMA_DIR / "recipe.schema.json").read_text())
    cluster = json.loads((SCHEMA_DIR / "cluster.schema.json").read_text())
    return {
        OUT_DIR / "recipe.py": Generator(recipe, None).render(
            "schema/recipe.schema.json",
            "Recipe structs (schema 2), generated from the JSON Schema.",
        ),
        OUT_DIR / "cluster.py": Generator(
            cluster,
            "ClusterConfig",
            # One struct per concept: the definitions both schemas share are the recipe's.
            shared={
                name: "srt_schema.recipe"
                for name, node in cluster.get("$defs", {}).items()
                if recipe.get("$defs", {}).get(name) == node
            },
        ).render(
            "schema/cluster.schema.json", "srtslurm.yaml structs, generated from the JSON Schema."
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the modules are stale")
    args = parser.parse_args(argv)
    stale = 0
    for path, text in build().items():
        current = path.read_text() if path.exists() else ""
        if current == text:
            continue
        if args.check:
            stale += 1
            diff = difflib.unified_diff(
                current.splitlines(True), text.splitlines(True), str(path), "regenerated"
            )
            sys.stdout.writelines(list(diff)[:80])
            print(f"\n{path} is stale; run `make generate` and commit the result")
        else:
            path.write_text(text)
            print(f"wrote {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())

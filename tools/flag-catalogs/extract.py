"""Flag catalogs, read statically from an engine's or router's source (issue 30).

Never imports the package (no torch, no GPU): it parses the source files with ``ast`` and
collects every ``add_argument`` / ``add_negatable_bool_argument`` call of the argument
parser the program builds (names, aliases, ``--no-`` forms, value kind, choices, deprecation).

Sources, per tool (``TOOLS`` below):
- a wheel fetched from PyPI's JSON API into a cache folder outside the repo
  (``--cache``, default ``~/.cache/srt-flag-catalogs``), read without unpacking it;
- or an unpacked install (``--site-packages``; default: this interpreter's, for the routers
  and the Dynamo frontend installed in the workspace's ``.venv``).

sglang-router, smg and vllm-router ship Rust extensions but parse their command line in
Python (``router_args.py``), so their catalogs come from the same AST reader.

Output: ``packages/srt-planner/src/srt_planner/flag_catalogs/<tool>-<version>.json.gz``, a
compact ``FlagCatalog`` (srt_planner.flagcheck): ``flags`` maps each spelling to
``[kind, choices | null, canonical | null, deprecated]``.

One file of ~700 lines on purpose: it is a stand-alone generator run by hand (not imported by
any package), and keeping it whole lets it be copied into a container and run there.

Usage:
    python tools/flag-catalogs/extract.py sglang 0.5.8 0.5.12
    python tools/flag-catalogs/extract.py dynamo-frontend --installed
    python tools/flag-catalogs/extract.py --list
"""

from __future__ import annotations

import argparse
import ast
import gzip
import io
import json
import os
import sysconfig
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

OUT = Path(__file__).resolve().parents[2] / "packages/srt-planner/src/srt_planner/flag_catalogs"


@dataclass(frozen=True)
class Tool:
    """One program srt launches: where its parser is defined."""

    distribution: str  # the PyPI name
    entries: tuple[str, ...]  # files (inside the wheel / site-packages) that hold the parser
    follow: tuple[str, ...] = ()  # import prefixes whose modules add arguments too
    #: argv normalisation the program does itself (vLLM accepts ``--a_b`` for ``--a-b``).
    underscores: bool = False
    extra: Callable[[Sources], dict[str, list[Any]]] | None = None
    notes: str = ""


Sources = dict[str, str]  # path inside the distribution -> text


def _vllm_extra(sources: Sources) -> dict[str, list[Any]]:
    return {
        **_dataclass_flags(sources, ("FrontendArgs", "BaseFrontendArgs")),
        **_config_kwargs_flags(sources),
    }


def _config_kwargs_flags(sources: Sources) -> dict[str, list[Any]]:
    """vLLM: ``group.add_argument("--x", **model_kwargs["x"])`` where ``model_kwargs =
    get_kwargs(ModelConfig)``: kind and choices come from the config dataclass field's type
    (``get_kwargs``: a bool in the type -> BooleanOptionalAction, Literal -> choices,
    list/tuple/set -> nargs, int/float -> typed)."""
    names: dict[str, ast.AST] = {}
    fields: dict[str, dict[str, ast.AST]] = {}
    trees = {path: ast.parse(text) for path, text in sources.items()}
    for tree in trees.values():
        names.update(_module_names(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                table = fields.setdefault(node.name, {})
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        table.setdefault(item.target.id, item.annotation)
    out: dict[str, list[Any]] = {}
    for tree in trees.values():
        kwarg_class: dict[str, str] = {}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
                and ast.unparse(node.value.func) == "get_kwargs"
                and node.value.args
            ):
                kwarg_class[node.targets[0].id] = ast.unparse(node.value.args[0])
        for call, _ in _calls(tree):
            spread = [k.value for k in call.keywords if k.arg is None]
            if spread and isinstance(spread[0], ast.Dict):  # **{**kwargs["x"], "default": ...}
                spread = [
                    v for k, v in zip(spread[0].keys, spread[0].values, strict=True) if k is None
                ]
            if not spread or not isinstance(spread[0], ast.Subscript):
                continue
            holder = ast.unparse(spread[0].value)
            key = spread[0].slice
            if holder not in kwarg_class or not isinstance(key, ast.Constant):
                continue
            annotation = fields.get(kwarg_class[holder], {}).get(str(key.value))
            spellings = [t for t in (_flag_text(a) for a in call.args) if t]
            if annotation is None or not spellings:
                continue
            kind, choices, negatable = _vllm_kind(annotation, names)
            if kind == "int" and str(key.value) in _HUMAN_INTS:
                kind = "str"  # "32k", "auto": human_readable_int(_or_auto)
            out[spellings[0]] = [kind, choices, None, False]
            for alias in spellings[1:]:
                out[alias] = [kind, choices, spellings[0], False]
            if negatable:
                out["--no-" + spellings[0][2:]] = ["bool", None, spellings[0], False]
    return out


_HUMAN_INTS = {
    "max_model_len",
    "max_num_batched_tokens",
    "kv_cache_memory_bytes",
    "safetensors_prefetch_block_size",
}


def _vllm_kind(
    annotation: ast.AST, names: dict[str, ast.AST]
) -> tuple[str, list[str] | None, bool]:
    members = _union_members(annotation, names)
    texts = {ast.unparse(m).split("[")[0] for m in members}
    if texts == {"bool", "str", "None"}:
        return "str", None, False
    if "bool" in texts:
        return "bool", None, True
    literal = [m for m in members if ast.unparse(m).startswith("Literal[")]
    if literal:
        choices = _literal_choices(literal[0])
        return "str", choices, False
    if texts & {"list", "tuple", "set", "List", "Tuple", "Set"}:
        return "list", None, False
    plain = texts - {"None"}
    if plain == {"int"}:
        return "int", None, False
    if plain in ({"float"}, {"float", "int"}):
        return "float", None, False
    return "str", None, False


def _union_members(node: ast.AST, names: dict[str, ast.AST], depth: int = 0) -> list[ast.AST]:
    if depth > 4:
        return [node]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left, names, depth + 1) + _union_members(
            node.right, names, depth + 1
        )
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in {"Optional", "Union"}:
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out = [m for p in parts for m in _union_members(p, names, depth + 1)]
        if ast.unparse(node.value) == "Optional":
            out.append(ast.Constant(None))
        return out
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _union_members(ast.parse(node.value, mode="eval").body, names, depth + 1)
        except SyntaxError:
            return [node]
    if isinstance(node, ast.Name) and node.id in names:
        target = names[node.id]
        if isinstance(target, ast.Subscript | ast.BinOp):
            return _union_members(target, names, depth + 1)
    return [node]


TOOLS: dict[str, Tool] = {
    "sglang": Tool(
        "sglang",
        ("sglang/srt/server_args.py",),
        follow=("sglang.srt.arg_groups",),
        extra=lambda sources: _annotated_fields(sources),  # noqa: PLW0108 (defined below)
        notes="add_cli_args; from 0.5.19 also the A[T, Arg(...)] fields of arg_groups/fields",
    ),
    "vllm": Tool(
        "vllm",
        (
            "vllm/engine/arg_utils.py",
            "vllm/entrypoints/openai/cli_args.py",
            "vllm/entrypoints/launchers/cli_args.py",
            "vllm/entrypoints/common/cli_args.py",
            "vllm/entrypoints/cli/serve.py",
            "vllm/utils/argparse_utils.py",
            "vllm/utils/__init__.py",
        ),
        follow=("vllm.config",),
        underscores=True,
        extra=_vllm_extra,
        notes="EngineArgs.add_cli_args, FrontendArgs dataclass fields, serve's own arguments",
    ),
    "dynamo-frontend": Tool(
        "ai-dynamo",
        ("dynamo/frontend/frontend_args.py", "dynamo/frontend/main.py"),
        follow=("dynamo.common.configuration", "dynamo.common.config_dump"),
    ),
    "dynamo-sglang": Tool(
        "ai-dynamo",
        ("dynamo/sglang/args.py", "dynamo/sglang/backend_args.py"),
        follow=("dynamo.common.configuration", "dynamo.common.config_dump"),
        notes="Dynamo's own arguments of python -m dynamo.sglang (SGLang's are the sglang catalog)",
    ),
    "dynamo-vllm": Tool(
        "ai-dynamo",
        ("dynamo/vllm/args.py", "dynamo/vllm/backend_args.py"),
        follow=("dynamo.common.configuration", "dynamo.common.config_dump"),
        notes="Dynamo's own arguments of python -m dynamo.vllm (vLLM's are the vllm catalog)",
    ),
    "sglang-router": Tool("sglang-router", ("sglang_router/router_args.py",)),
    "smg": Tool("smg", ("smg/router_args.py",)),
    "vllm-router": Tool("vllm-router", ("vllm_router/router_args.py",)),
}

_ADDERS = {"add_argument", "add_negatable_bool_argument"}
_BOOL_ACTIONS = {"store_true", "store_false", "BooleanOptionalAction"}


def _const_list(
    node: ast.AST | None, names: dict[str, ast.AST], depth: int = 0
) -> list[str] | None:
    """A literal list of choices (through module-level names and ``+``), else None."""
    if node is None or depth > 5:
        return None
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        out: list[str] = []
        for item in node.elts:
            if isinstance(item, ast.Constant) and isinstance(item.value, str | int | float):
                out.append(str(item.value))
            elif isinstance(item, ast.Starred):
                sub = _const_list(item.value, names, depth + 1)
                if sub is None:
                    return None
                out += sub
            else:
                return None
        return out
    if isinstance(node, ast.Name) and node.id in names:
        return _const_list(names[node.id], names, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _const_list(node.left, names, depth + 1)
        right = _const_list(node.right, names, depth + 1)
        return None if left is None or right is None else left + right
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"list", "sorted", "tuple", "set"}
        and len(node.args) == 1
    ):
        return _const_list(node.args[0], names, depth + 1)
    return None


def _flag_text(node: ast.AST) -> str | None:
    """``"--x"`` or ``f"--{prefix}x"`` (formatted parts dropped: the standalone program's name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value.startswith("-") else None
    if isinstance(node, ast.JoinedStr):
        text = "".join(
            part.value
            for part in node.values
            if isinstance(part, ast.Constant) and isinstance(part.value, str)
        )
        return text if text.startswith("-") else None
    return None


def _kind(call: ast.Call, adder: str) -> tuple[str, bool]:
    """(value kind, has a ``--no-`` form)."""
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    if adder == "add_negatable_bool_argument":
        return "bool", True
    action = kw.get("action")
    action_name = ""
    if isinstance(action, ast.Constant) and isinstance(action.value, str):
        action_name = action.value
    elif isinstance(action, ast.Attribute):
        action_name = action.attr
    elif isinstance(action, ast.Name):
        action_name = action.id
    if action_name in _BOOL_ACTIONS:
        return "bool", action_name == "BooleanOptionalAction"
    if "nargs" in kw:
        return "list", False
    arg_type = kw.get("type", kw.get("arg_type"))
    if isinstance(arg_type, ast.Name) and arg_type.id in {"int", "float"}:
        return arg_type.id, False
    return "str", False


def _deprecated(call: ast.Call) -> bool:
    for k in call.keywords:
        if k.arg == "deprecated" and not (isinstance(k.value, ast.Constant) and not k.value.value):
            return True
        if k.arg == "action" and "Deprecat" in ast.unparse(k.value):
            return True
        if k.arg == "help" and "deprecated" in ast.unparse(k.value).lower()[:80]:
            return True
    return False


def _module_names(tree: ast.Module) -> dict[str, ast.AST]:
    names: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                names[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            names[node.target.id] = node.value
    return names


def _calls(tree: ast.Module) -> Iterator[tuple[ast.Call, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in _ADDERS:
            yield node, name


def flags_of_source(text: str, shared: dict[str, ast.AST] | None = None) -> dict[str, list[Any]]:
    """Every flag one source file adds: spelling -> [kind, choices, canonical, deprecated]."""
    tree = ast.parse(text)
    names = {**(shared or {}), **_module_names(tree)}
    out: dict[str, list[Any]] = {}
    for call, adder in _calls(tree):
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        spellings = [s for s in (_flag_text(a) for a in call.args) if s]
        for key in ("flag_name", "alias", "obsolete_flag"):  # Dynamo: obsolete = accepted alias
            if key in kw and (text_ := _flag_text(kw[key])):
                spellings.append(text_)
        if not spellings:
            continue
        kind, negatable = _kind(call, adder)
        choices = _const_list(kw.get("choices"), names)
        deprecated = _deprecated(call)
        canonical = spellings[0]
        out.setdefault(canonical, [kind, choices, None, deprecated])
        for alias in spellings[1:]:
            out.setdefault(alias, [kind, choices, canonical, deprecated])
        if negatable:
            for spelling in spellings:
                if spelling.startswith("--"):
                    out.setdefault("--no-" + spelling[2:], ["bool", None, canonical, deprecated])
    for node in ast.walk(tree):  # Dynamo <= 0.8: {"flags": ["--x"], "type": ..., "choices": ...}
        if not isinstance(node, ast.Dict):
            continue
        spec = {
            k.value: v
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant)
        }
        spellings = [
            t for t in (_flag_text(e) for e in getattr(spec.get("flags"), "elts", [])) if t
        ]
        if not spellings:
            continue
        fake = ast.Call(
            func=ast.Name("add_argument"),
            args=[],
            keywords=[ast.keyword(arg=str(k), value=v) for k, v in spec.items() if k != "flags"],
        )
        kind, negatable = _kind(fake, "add_argument")
        choices = _const_list(spec.get("choices"), names)
        out.setdefault(spellings[0], [kind, choices, None, _deprecated(fake)])
        for alias in spellings[1:]:
            out.setdefault(alias, [kind, choices, spellings[0], False])
        if negatable:
            out.setdefault("--no-" + spellings[0][2:], ["bool", None, spellings[0], False])
    return out


def _annotated_fields(sources: Sources) -> dict[str, list[Any]]:
    """SGLang >= 0.5.19: ``field: A[T, "help"]`` / ``A[T, Arg(...)]`` in namespace classes
    become flags (``add_cli_args_from_dataclass``): ``--field-name`` or ``Arg.cli_name``,
    ``Arg.aliases``; bool -> store_true, list -> nargs, Literal/``Arg.choices`` -> choices."""
    names: dict[str, ast.AST] = {}
    for text in sources.values():
        names.update(_module_names(ast.parse(text)))
    out: dict[str, list[Any]] = {}
    for text in sources.values():
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                    continue
                ann = item.annotation
                if not (isinstance(ann, ast.Subscript) and ast.unparse(ann.value) == "A"):
                    continue
                parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
                if len(parts) < 2:
                    continue
                kind_node, meta = parts[0], parts[1]
                kw: dict[str, ast.AST] = {}
                if isinstance(meta, ast.Call):
                    kw = {k.arg: k.value for k in meta.keywords if k.arg}
                if isinstance(kw.get("no_cli"), ast.Constant) and kw["no_cli"].value:
                    continue
                cli = kw.get("cli_name")
                name = (
                    cli.value
                    if isinstance(cli, ast.Constant) and isinstance(cli.value, str)
                    else "--" + item.target.id.replace("_", "-")
                )
                aliases = _const_list(kw.get("aliases"), names) or []
                inner = _strip_optional(kind_node)
                text_type = ast.unparse(inner)
                choices = _const_list(kw.get("choices"), names) or _literal_choices(inner)
                if "action" in kw:
                    action = ast.unparse(kw["action"])
                    kind = "bool" if any(a in action for a in _BOOL_ACTIONS) else "str"
                elif text_type == "bool":
                    kind = "bool"
                elif text_type.startswith(("List", "list")) and "type_parser" not in kw:
                    kind = "list"
                elif text_type in {"int", "float"} and "type_parser" not in kw:
                    kind = text_type
                else:
                    kind = "str"
                deprecated = "Deprecat" in ast.unparse(meta)
                out.setdefault(name, [kind, choices, None, deprecated])
                for alias in aliases:
                    out.setdefault(alias, [kind, choices, name, deprecated])
                if "BooleanOptionalAction" in ast.unparse(kw.get("action", ast.Constant(""))):
                    out.setdefault("--no-" + name[2:], ["bool", None, name, deprecated])
    return out


def _strip_optional(node: ast.AST) -> ast.AST:
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "Optional":
        return node.slice
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.BitOr)
        and ast.unparse(node.right) == "None"
    ):
        return node.left
    return node


def _dataclass_flags(sources: Sources, classes: tuple[str, ...]) -> dict[str, list[Any]]:
    """``--field-name`` for each field of the dataclasses whose fields become flags."""
    out: dict[str, list[Any]] = {}
    for text in sources.values():
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ClassDef) and node.name in classes):
                continue
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    if item.target.id.startswith("_"):
                        continue
                    flag = "--" + item.target.id.replace("_", "-")
                    annotation = ast.unparse(item.annotation)
                    choices = _literal_choices(item.annotation)
                    kind = "bool" if annotation == "bool" else "str"
                    out.setdefault(flag, [kind, choices, None, False])
                    if kind == "bool":
                        out.setdefault("--no-" + flag[2:], ["bool", None, flag, False])
    return out


def _literal_choices(annotation: ast.AST) -> list[str] | None:
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) == "Literal":
        items = (
            annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        )
        if all(isinstance(i, ast.Constant) for i in items):
            return [str(i.value) for i in items if isinstance(i, ast.Constant)]
    return None


def _follow(text: str, prefixes: tuple[str, ...], current: str) -> list[str]:
    """Module paths (``a/b/c.py``) imported by ``text`` under one of ``prefixes``."""
    out: list[str] = []
    package = current.rsplit("/", 1)[0].replace("/", ".")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{module}" if module else base
            if module.startswith(prefixes):
                out.append(module.replace(".", "/") + ".py")
                out.append(module.replace(".", "/") + "/__init__.py")
                for alias in node.names:
                    out.append(f"{module.replace('.', '/')}/{alias.name}.py")
    return out


def collect_sources(tool: Tool, read: Callable[[str], str | None]) -> Sources:
    sources: Sources = {}
    pending = list(tool.entries)
    while pending:
        path = pending.pop()
        if path in sources:
            continue
        text = read(path)
        if text is None:
            continue
        sources[path] = text
        if tool.follow:
            pending += [p for p in _follow(text, tool.follow, path) if p not in sources]
    if not any(entry in sources for entry in tool.entries):
        raise SystemExit(f"none of {tool.entries} found")
    return sources


def build_catalog(name: str, version: str, sources: Sources, origin: str) -> dict[str, Any]:
    tool = TOOLS[name]
    flags: dict[str, list[Any]] = {}
    shared: dict[str, ast.AST] = {}
    for text in sources.values():
        shared.update(_module_names(ast.parse(text)))
    for path in sorted(sources):
        for flag, entry in flags_of_source(sources[path], shared).items():
            flags.setdefault(flag, entry)
    if tool.extra is not None:
        flags.update(tool.extra(sources))
    flags = {k: v for k, v in sorted(flags.items()) if k not in {"-h", "--help", "--", "-"}}
    return {
        "tool": name,
        "version": version,
        "origin": origin,
        "files": sorted(sources),
        "underscores": tool.underscores,
        # argparse takes an unambiguous prefix of a long flag unless the parser says otherwise
        "abbrev": not any("allow_abbrev=False" in text for text in sources.values()),
        "flags": flags,
    }


class _RemoteFile(io.RawIOBase):
    """A seekable view of a remote wheel through HTTP range requests (64 KiB blocks).

    zipfile reads the central directory and then only the members asked for, so a 400 MB
    vLLM wheel costs a few hundred KiB of traffic."""

    _BLOCK = 1 << 16

    def __init__(self, url: str, size: int, client: httpx.Client) -> None:
        self._url, self._size, self._client, self._pos = url, size, client, 0
        self._blocks: dict[int, bytes] = {}

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = base + offset
        return self._pos

    def _block(self, index: int) -> bytes:
        if index not in self._blocks:
            first = index * self._BLOCK
            last = min(first + self._BLOCK, self._size) - 1
            response = self._client.get(self._url, headers={"Range": f"bytes={first}-{last}"})
            if response.status_code != 206:
                raise SystemExit(f"{self._url}: no range support ({response.status_code})")
            self._blocks[index] = response.content
        return self._blocks[index]

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._size - self._pos)
        done = 0
        while done < want:
            index, offset = divmod(self._pos, self._BLOCK)
            chunk = self._block(index)[offset : offset + want - done]
            view[done : done + len(chunk)] = chunk
            done += len(chunk)
            self._pos += len(chunk)
        return done


def wheel_reader(
    distribution: str, version: str, cache: Path
) -> tuple[Callable[[str], str | None], str]:
    """A reader over the PyPI wheel of ``distribution==version``, read with range requests;
    the members read are kept under ``cache/<distribution>/<version>/`` for the next run."""
    client = httpx.Client(timeout=120, follow_redirects=True)
    index = client.get(
        f"https://pypi.org/simple/{distribution}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    ).json()
    files = [
        f
        for f in index["files"]
        if f["filename"].endswith(".whl") and f"-{version}-" in f["filename"]
    ]
    if not files:
        known = ", ".join(index.get("versions", [])[-8:])
        raise SystemExit(f"{distribution}=={version}: no wheel on PyPI (newest: {known})")
    pure = [f for f in files if "none-any" in f["filename"]]
    linux = [f for f in files if "x86_64" in f["filename"]]
    chosen = sorted(pure or linux or files, key=lambda f: len(f["filename"]))[0]
    folder = cache / distribution / version
    holder: list[zipfile.ZipFile] = []

    def read(path: str) -> str | None:
        kept = folder / path
        missing = folder / (path + ".missing")
        if kept.is_file():
            return kept.read_text()
        if missing.is_file():
            return None
        if not holder:
            remote = _RemoteFile(chosen["url"], int(chosen["size"]), client)
            holder.append(zipfile.ZipFile(io.BufferedReader(remote, 1 << 16)))
        archive = holder[0]
        kept.parent.mkdir(parents=True, exist_ok=True)
        if path not in archive.namelist():
            missing.touch()
            return None
        text = archive.read(path).decode()
        kept.write_text(text)
        return text

    return read, f"PyPI wheel {chosen['filename']}"


def installed_reader(site: Path) -> Callable[[str], str | None]:
    def read(path: str) -> str | None:
        file = site / path
        return file.read_text() if file.is_file() else None

    return read


def installed_version(site: Path, distribution: str) -> str:
    norm = distribution.replace("-", "_").lower()
    for info in site.glob("*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].rpartition("-")
        if name.lower() == norm:
            return version
    raise SystemExit(f"{distribution} is not installed in {site}")


def write(catalog: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{catalog['tool']}-{catalog['version']}.json.gz"
    data = json.dumps(catalog, separators=(",", ":"), sort_keys=True).encode()
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(data)
    path.write_bytes(buffer.getvalue())
    return path


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tool", nargs="?", choices=sorted(TOOLS))
    parser.add_argument("versions", nargs="*", help="versions to fetch from PyPI")
    parser.add_argument("--installed", action="store_true", help="read this environment's install")
    parser.add_argument(
        "--site-packages", type=Path, default=Path(sysconfig.get_paths()["purelib"])
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("SRT_FLAG_CACHE", Path.home() / ".cache/srt-flag-catalogs")),
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.tool is None:
        for name, tool in TOOLS.items():
            print(f"{name}: {tool.distribution} {', '.join(tool.entries)}")
        return 0
    tool = TOOLS[args.tool]
    jobs: list[tuple[str, Callable[[str], str | None], str]] = []
    if args.installed:
        version = installed_version(args.site_packages, tool.distribution)
        jobs.append(
            (version, installed_reader(args.site_packages), f"installed {tool.distribution}")
        )
    for version in args.versions:
        read, origin = wheel_reader(tool.distribution, version, args.cache)
        jobs.append((version, read, origin))
    for version, read, origin in jobs:
        catalog = build_catalog(args.tool, version, collect_sources(tool, read), origin)
        path = write(catalog, args.out)
        print(f"{path.name}: {len(catalog['flags'])} spellings, {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Pre-submit checks: the model folder, container images and telemetry binaries exist where the
cluster config says (docs/recipes.md#preflight), and the engine/router flags pass the catalog of
the version installed where they run (docs/flag-check.md#probing). Reads the filesystem and PATH,
runs the version probe; submits nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from srt_cli.environment import Edge
    from srt_cli.planning import PlannedJob
    from srt_cli.probing import Probe, Runtime
    from srt_planner.flagcheck import Installed
    from srt_planner.plan import JobPlan, ProcessSpec
    from srt_schema.cluster import ClusterConfig

__all__ = [
    "Finding",
    "check_job",
    "check_versions",
    "is_image_uri",
    "preflight_path",
    "unknown_aliases",
]


@dataclass(frozen=True)
class Finding:
    """One failed check: the field and what to do about it."""

    field: str
    message: str
    #: False for a program of a non-critical process: reported, but it does not block the job.
    fatal: bool = True
    #: Said after a non-fatal finding instead of the default note.
    note: str | None = None


def preflight_path(edge: Edge, python: str) -> str:
    """Where programs are looked up: the runtime interpreter's folder, then ``$PATH``."""
    folder = str(Path(python).parent)
    return os.pathsep.join([folder, edge.environ.get("PATH", os.defpath)])


def is_image_uri(image: str) -> bool:
    """A registry reference (``nvcr.io#nvidia/x:1``, ``nginx:1.27``), not a local ``.sqsh`` file."""
    return not image.startswith(("/", "./", "~")) and ":" in image


def _alias_of(value: str, table: dict[str, str] | None) -> str | None:
    for alias, target in (table or {}).items():
        if target == value:
            return alias
    return None


def _expand(path: str) -> Path:
    return Path(os.path.expandvars(path)).expanduser()


def _check_model(path: str, cluster: ClusterConfig | None) -> Finding | None:
    if path.startswith("hf:") or _expand(path).is_dir():
        return None
    alias = _alias_of(path, cluster.model_paths if cluster else None)
    if alias is not None:
        return Finding(
            "$.model.path",
            f"alias {alias!r} resolves to {path!r}, which is not a folder on this machine; "
            "fix model_paths in srtslurm.yaml or mount the model",
        )
    hint = _suggest(path, cluster.model_paths if cluster else None, cluster is not None)
    return Finding(
        "$.model.path",
        f"{path!r} is not a folder and not a model_paths alias ({hint}); give an existing "
        "folder, an alias, or hf:<repo>",
    )


def _check_image(field: str, image: str, cluster: ClusterConfig | None) -> Finding | None:
    if is_image_uri(image) or _expand(image).is_file():
        return None
    alias = _alias_of(image, cluster.containers if cluster else None)
    if alias is not None:
        return Finding(
            field, f"alias {alias!r} resolves to {image!r}, which is not a file on this machine"
        )
    hint = _suggest(image, cluster.containers if cluster else None, cluster is not None)
    return Finding(
        field,
        f"{image!r} is neither a registry image (name:tag) nor an existing file, and not a "
        f"containers alias ({hint})",
    )


def _check_binary(field: str, program: str, search_path: str) -> Finding | None:
    import shutil

    if "/" in program:
        if os.access(_expand(program), os.X_OK):
            return None
        return Finding(field, f"{program!r} does not exist or is not executable")
    if shutil.which(program, path=search_path) is not None:
        return None
    return Finding(field, f"{program!r} is not on PATH ({search_path}); install it or put it there")


def _missing_modules(python: str, modules: list[str]) -> set[str] | None:
    """The ``modules`` that ``python`` cannot import (None: the interpreter did not answer)."""
    import json
    import subprocess

    script = (
        "import importlib.util, json, sys\n"
        "def found(m):\n"
        "    try:\n"
        "        return importlib.util.find_spec(m) is not None\n"
        "    except (ImportError, ValueError):\n"
        "        return False\n"
        "print(json.dumps([m for m in sys.argv[1:] if not found(m)]))"
    )
    try:
        done = subprocess.run(
            [python, "-c", script, *modules],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
        missing = json.loads(done.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    return set(missing) if done.returncode == 0 and isinstance(missing, list) else None


def _module_of(argv: tuple[str, ...]) -> str | None:
    """``python -m pkg.mod ...`` -> ``pkg.mod``."""
    if len(argv) >= 3 and argv[1] == "-m" and argv[0].rsplit("/", 1)[-1].startswith("python"):
        return argv[2]
    return None


def _check_modules(plan: JobPlan, python: str) -> list[Finding]:
    """Python modules the plan's processes run (``python -m X``) that the runtime interpreter
    lacks: a missing router or Dynamo module is named before the job starts."""
    wanted: dict[str, ProcessSpec] = {}
    for spec in plan.processes:
        module = _module_of(spec.argv)
        if module is not None and (spec.argv[0] == python or spec.argv[0] == "python3"):
            wanted.setdefault(module, spec)
    if not wanted:
        return []
    missing = _missing_modules(python, sorted(wanted))
    if missing is None:
        return []
    return [
        Finding(
            f"{wanted[m].kind} {wanted[m].name}",
            f"{python} cannot import {m!r}; install the package that provides it "
            "(docs/vocabularies.md names each frontend's PyPI distribution)",
            fatal=wanted[m].critical or wanted[m].oneshot,
        )
        for m in sorted(missing)
    ]


def check_hub(model: str, environ: Mapping[str, str]) -> Finding | None:
    """An ``hf:`` model: does the hub resolve it (``HF_ENDPOINT``, ``HF_TOKEN``)? A refusal (401
    gated, 404) blocks the job; a hub this machine cannot reach is said, not a failure."""
    from srt_bench.hub import check_hub_model

    check = check_hub_model(model, environ)
    if check.status == "ok":
        return None
    if check.status == "refused":
        return Finding("$.model.path", check.detail)
    return Finding(
        "$.model.path",
        f"{model}: {check.detail}",
        fatal=False,
        note=" (not checked; the job's bench_tokenizer step fails first if it is refused)",
    )


def check_job(
    planned: PlannedJob,
    cluster: ClusterConfig | None,
    *,
    search_path: str,
    python: str,
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every failed check of one planned job (empty when it may be submitted). ``python``: the
    runtime interpreter, whose ``python -m`` modules are checked (container runtime none).
    ``environ``: the environment the job gets (an ``hf:`` model is asked of the hub with it; no
    hub check without it)."""
    findings: list[Finding] = []
    recipe = planned.job.recipe
    plan = planned.plan
    if environ is not None and recipe.model.path.startswith("hf:"):
        hub = check_hub(recipe.model.path, {**environ, **recipe.environment})
        if hub is not None:
            findings.append(hub)
    # A stand-in run reads no model weights: its stand-ins load the stand-in model.
    model = None if plan.stand_in is not None else _check_model(recipe.model.path, cluster)
    if model is not None:
        findings.append(model)
    if plan.container_runtime == "pyxis":
        seen: set[str] = set()
        for spec in plan.processes:
            if spec.container is None or spec.container.image in seen:
                continue
            seen.add(spec.container.image)
            field = (
                "$.model.container"
                if spec.container.image == recipe.model.container
                else (f"container of {spec.name}")
            )
            image = _check_image(field, spec.container.image, cluster)
            if image is not None:
                findings.append(image)
    else:
        # Container runtime none: every program runs from this host's PATH.
        checked: set[str] = set()
        for spec in (*plan.processes, *plan.teardown):
            if not spec.argv or spec.argv[0] in checked:
                continue
            checked.add(spec.argv[0])
            binary = _check_binary(f"{spec.kind} {spec.name}", spec.argv[0], search_path)
            if binary is not None:
                findings.append(
                    Finding(binary.field, binary.message, fatal=spec.critical or spec.oneshot)
                )
        findings += _check_modules(plan, python)
    return findings


def check_versions(
    planned: PlannedJob,
    cluster: ClusterConfig,
    *,
    python: str,
    probe: Callable[[Runtime, list[str]], Probe] | None,
) -> tuple[list[str], list[Finding]]:
    """Probe every runtime of the job's catalogued programs (``probe``: srt_cli.probing.run_probe,
    cached by the caller; None: no probe, the versions validate resolves), say what each has and
    which catalog each program is checked against, and check the flags against those catalogs:
    an error is fatal, a warning is not."""
    from srt_cli.flagcheck import findings_of, host_versions, load_catalogs
    from srt_cli.probing import describe_versions, runtimes_of
    from srt_planner.flagcheck import resolve_catalogs

    runtimes = runtimes_of(planned.plan, python) if probe is not None else {}
    probes = [probe(runtime, wanted) for runtime, wanted in runtimes.items() if probe is not None]
    host: Installed | None = None
    images: dict[str, Installed] = {}
    for found in probes:
        if found.error is not None:
            continue
        if found.runtime.image is None:
            host = host or found.installed()
        else:
            images.setdefault(found.runtime.image, found.installed())
    host = host or host_versions(cluster)
    recipe = planned.job.recipe
    catalogs = load_catalogs()
    choices = resolve_catalogs(planned.plan, recipe, cluster, catalogs, host=host, images=images)
    findings = [
        Finding(
            f.path,
            f.message,
            fatal=f.severity == "error",
            note=None if f.severity == "error" else " (warning: the program may still accept it)",
        )
        for f in findings_of(planned, cluster, host=host, images=images)
        # the version lines say it
        if f.kind not in {"version-unresolved", "no-catalog"}
    ]
    return describe_versions(choices, probes), findings


def _suggest(value: str, table: dict[str, str] | None, have_cluster: bool) -> str:
    import difflib

    if not have_cluster:
        return "no srtslurm.yaml was found, so there are no aliases"
    aliases = sorted(table or {})
    close = difflib.get_close_matches(value, aliases, n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"known aliases: {', '.join(aliases)}" if aliases else "srtslurm.yaml defines none"


def unknown_aliases(planned: PlannedJob, cluster: ClusterConfig | None) -> list[Finding]:
    """References that look like aliases but resolve to nothing (dry-run warns about them).

    A relative ``model.path`` that is not ``hf:`` and a ``model.container`` that is neither a
    registry reference nor a path were almost certainly meant as srtslurm.yaml aliases.
    """
    recipe = planned.job.recipe
    found: list[Finding] = []
    have = cluster is not None
    path = recipe.model.path
    if not path.startswith(("/", "~", "$", "hf:", ".")):
        found.append(
            Finding(
                "$.model.path",
                f"{path!r} is not an absolute path, hf:<repo> or a model_paths alias "
                f"({_suggest(path, cluster.model_paths if cluster else None, have)})",
            )
        )
    image = recipe.model.container
    if not is_image_uri(image) and not image.startswith(("/", "~", "$", ".")):
        found.append(
            Finding(
                "$.model.container",
                f"{image!r} is not a registry image (name:tag), a path or a containers alias "
                f"({_suggest(image, cluster.containers if cluster else None, have)})",
            )
        )
    return found

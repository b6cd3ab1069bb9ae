"""``srtctl preflight``'s version probe (docs/flag-check.md#probing): which engine, frontend and
router packages are installed where a job's programs will run, read from the package metadata of
that interpreter (``importlib.metadata``; the engine is never imported, so no torch, no GPU).

A runtime is an interpreter, in a container image (pyxis) or not. On a Slurm cluster the probe
runs as one short ``srun`` step per distinct runtime, the way the job's steps run (the image's
``--container-image`` flags, the interpreter the plan's argv names); without Slurm it runs the
interpreter here. A runtime that cannot be probed is said, never fatal: the flag check then
resolves the version as ``srtctl validate`` does.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from srt_planner.flagcheck import CatalogChoice, Installed
    from srt_planner.plan import JobPlan

__all__ = [
    "PROBE_MARK",
    "PROBE_SCRIPT",
    "Probe",
    "Runtime",
    "SrunProbe",
    "describe_versions",
    "parse_probe",
    "probe_command",
    "run_probe",
    "runtimes_of",
]

#: The line the probe prints its answer on (srun and a container may print other lines).
PROBE_MARK = "SRT-PROBE "
#: Run by the runtime's interpreter as ``python -c PROBE_SCRIPT <distribution>...``; reads only
#: package metadata, works on every Python from 3.8.
PROBE_SCRIPT = (
    "import json, socket, sys\n"
    "from importlib import metadata\n"
    "found = {}\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        found[name] = metadata.version(name)\n"
    "    except metadata.PackageNotFoundError:\n"
    "        found[name] = None\n"
    f"print({PROBE_MARK!r} + json.dumps("
    "{'node': socket.gethostname(), 'python': sys.executable, 'versions': found}))\n"
)
#: The interpreter a container's steps run when the argv names none (``smg``, ``vllm``).
CONTAINER_PYTHON = "python3"
#: srun --immediate: a probe waits at most this long for a node, then says it could not run.
PROBE_WAIT_S = 60
#: Hang guard of one probe: the wait for a node plus an image pull of a large container.
PROBE_TIMEOUT_S = 900


@dataclass(frozen=True, order=True)
class Runtime:
    """Where programs run: an interpreter, inside ``image`` (pyxis) or on the node itself."""

    image: str | None
    python: str

    @property
    def label(self) -> str:
        return f"image {self.image} ({self.python})" if self.image else self.python


@dataclass(frozen=True)
class Probe:
    """What one probe found: distribution -> version (None: not installed), or why it failed."""

    runtime: Runtime
    versions: Mapping[str, str | None] = field(default_factory=dict)
    node: str | None = None
    #: The interpreter's own path as it reported it (``python3`` -> ``/usr/bin/python3``).
    python: str | None = None
    error: str | None = None

    @property
    def where(self) -> str:
        node = f" on {self.node}" if self.node else ""
        python = self.python or self.runtime.python
        if self.runtime.image:
            return f"probed in image {self.runtime.image}, {python}{node}"
        return f"probed in {python}{node}"

    def installed(self) -> Installed:
        """The probe as the flag check reads it (families of the installed distributions)."""
        from srt_planner.flagcheck import FAMILY_DISTRIBUTIONS, Installed

        versions = {
            family: version
            for family, distribution in FAMILY_DISTRIBUTIONS.items()
            if (version := self.versions.get(distribution)) is not None
        }
        return Installed(where=self.where, versions=versions)


@dataclass(frozen=True)
class SrunProbe:
    """How a probe step is started on the cluster."""

    srun: str
    partition: str = ""
    account: str = ""


def _interpreter(argv: Sequence[str], default: str) -> str:
    """The interpreter of ``<python> -m module ...``; ``default`` for an executable."""
    for i, token in enumerate(argv):
        if token == "-m" and i > 0:
            return argv[i - 1]
    return default


def runtimes_of(plan: JobPlan, python: str) -> dict[Runtime, list[str]]:
    """Every runtime of the plan's catalogued programs -> the distributions to probe in it.
    ``python``: the runtime interpreter of a job without containers (``python3`` and console
    scripts such as ``smg`` then run from its environment)."""
    from srt_planner.flagcheck import FAMILY_DISTRIBUTIONS, family_of, program_of

    out: dict[Runtime, list[str]] = {}
    for process in plan.processes:
        argv = tuple(process.stand_in_for or process.argv)
        found = program_of(argv)
        if found is None:
            continue
        image = process.container.image if process.container is not None else None
        interpreter = _interpreter(argv, CONTAINER_PYTHON if image is not None else python)
        if image is None and interpreter in ("python", "python3"):
            # without containers the job's steps run these as the runtime interpreter
            # (srt_runtime.launch.build_local_argv; its bin/ leads PATH for console scripts)
            interpreter = python
        runtime = Runtime(image=image, python=interpreter)
        wanted = out.setdefault(runtime, [])
        for tool in found[0]:
            distribution = FAMILY_DISTRIBUTIONS[family_of(tool)]
            if distribution not in wanted:
                wanted.append(distribution)
    return dict(sorted(out.items()))


def probe_command(
    runtime: Runtime, distributions: Sequence[str], srun: SrunProbe | None
) -> list[str]:
    """The probe's argv: the interpreter here, or in one srun step on a node."""
    task = [runtime.python, "-c", PROBE_SCRIPT, *distributions]
    if srun is None:
        return task
    argv = [
        srun.srun,
        "--nodes=1",
        "--ntasks=1",
        f"--immediate={PROBE_WAIT_S}",
        "--time=5",
        "--job-name=srt-preflight-probe",
    ]
    if srun.partition:
        argv.append(f"--partition={srun.partition}")
    if srun.account:
        argv.append(f"--account={srun.account}")
    if runtime.image is not None:
        argv += [
            "--container-image",
            runtime.image,
            "--no-container-entrypoint",
            "--no-container-mount-home",
        ]
    return [*argv, *task]


def parse_probe(runtime: Runtime, stdout: str) -> Probe | None:
    """The probe's answer line, or None when it printed none."""
    for line in reversed(stdout.splitlines()):
        if not line.startswith(PROBE_MARK):
            continue
        try:
            raw = json.loads(line[len(PROBE_MARK) :])
            versions = {str(k): (None if v is None else str(v)) for k, v in raw["versions"].items()}
            return Probe(
                runtime=runtime,
                versions=versions,
                node=str(raw["node"]),
                python=str(raw["python"]),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
    return None


def run_probe(
    runtime: Runtime,
    distributions: Sequence[str],
    *,
    srun: SrunProbe | None,
    environ: Mapping[str, str],
    timeout: float = PROBE_TIMEOUT_S,
) -> Probe:
    """Probe one runtime; a failure is returned as :attr:`Probe.error`, never raised."""
    if runtime.image is not None and srun is None:
        return Probe(
            runtime=runtime,
            error="an image is probed in an srun step, and srun is not on PATH",
        )
    argv = probe_command(runtime, distributions, srun)
    try:
        done = subprocess.run(
            argv,
            env=dict(environ),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except OSError as exc:
        return Probe(runtime=runtime, error=f"could not start {argv[0]}: {exc.strerror or exc}")
    except subprocess.TimeoutExpired:
        return Probe(runtime=runtime, error=f"no answer within {timeout:.0f} s")
    found = parse_probe(runtime, done.stdout)
    if found is not None:
        return found
    said = (done.stderr.strip() or done.stdout.strip()).splitlines()
    last = said[-1] if said else "no output"
    return Probe(runtime=runtime, error=f"{argv[0]} exited {done.returncode}: {last}")


def describe_versions(choices: Sequence[CatalogChoice], probes: Sequence[Probe]) -> list[str]:
    """What the probes found and, per program, the catalog its flags are checked against:
    ``sglang-router 0.3.2 (probed in /venv/bin/python on node1), catalog sglang-router 0.3.2
    (exact)``."""
    lines: list[str] = []
    for probe in probes:
        if probe.error is not None:
            lines.append(f"could not probe {probe.runtime.label}: {probe.error}")
            continue
        if probe.runtime.image is None:
            continue  # the program's line says "not installed, probed in ..."
        for distribution, version in probe.versions.items():
            if version is None:
                # the image's tag or container_versions may still name a version
                lines.append(f"{distribution}: not installed ({probe.where})")
    seen: set[tuple[str, str | None, str]] = set()
    for choice in choices:
        key = (choice.tool, choice.version, choice.where)
        if key in seen:
            continue
        seen.add(key)
        if choice.version is None:
            lines.append(
                f"{choice.tool}: version unresolved ({choice.where}), nearest catalog "
                f"{choice.tool} {choice.catalog}"
            )
            continue
        catalog = (
            f"catalog {choice.tool} {choice.catalog} (exact)"
            if choice.exact
            else f"nearest catalog {choice.tool} {choice.catalog}"
        )
        lines.append(f"{choice.tool} {choice.version} ({choice.where}), {catalog}")
    return lines

"""The end-to-end tier: a real Slurm cluster on this machine, for the whole test session.

Every test under ``tests/e2e`` is marked ``e2e`` (by the collection hook below, so new files need
nothing). The session fixture ``slurm_cluster`` starts ``tools/slurm-lab/start-cluster.sh 3 4``
(slurmctld + 3 slurmd, each node in its own network namespace with its own hostname and address,
4 fake GPUs per node through GRES, the pyxis stub SPANK plugin) and stops it at session end on every
exit path: test failure, Ctrl-C, SIGTERM.

When this machine cannot run the cluster (not root, or Debian's Slurm packages missing) the tests
are skipped with a reason that names what is missing and how to install it, except under
``SRT_REQUIRE_E2E=1`` (CI), where the fixture fails instead. A line in the terminal summary says
whether the tier ran or why it did not.

The scenario tests use ``srt`` (``support/e2e_jobs.py``): the real ``srtctl apply`` against this
cluster through a generated srtslurm.yaml (container runtime ``none``, this interpreter, output
in a session temporary folder). A failing test's report ends with each of its jobs' status,
diagnosis and the tail of every log; jobs a test leaves queued are cancelled.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "support"))  # `e2e_jobs` under --import-mode=importlib

from e2e_jobs import SrtOnSlurm  # noqa: E402

REPO = HERE.parents[1]
LAB = REPO / "tools" / "slurm-lab"
LOCK_DIR = Path("/tmp/slurmlab")
INSTANCES = 10  # SLURMLAB_INSTANCE is 0..9
NODES = 3
GPUS_PER_NODE = 4
INSTALL_COMMAND = "bash .ci/install-system.sh"
REQUIRE_ENV = "SRT_REQUIRE_E2E"
TERMINAL_STATES = frozenset(
    {
        "BOOT_FAIL",
        "CANCELLED",
        "COMPLETED",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "TIMEOUT",
    }
)
# file -> Debian package that provides it (what start-cluster.sh 3 4 with the pyxis stub runs)
REQUIRED_FILES: Mapping[str, str] = {
    "/usr/sbin/slurmctld": "slurm-wlm",
    "/usr/sbin/slurmd": "slurm-wlm",
    "/usr/bin/srun": "slurm-wlm",
    "/usr/bin/sbatch": "slurm-wlm",
    "/usr/bin/scontrol": "slurm-wlm",
    "/usr/sbin/munged": "munge",
    "/usr/include/slurm/spank.h": "libslurm-dev",
    "/usr/bin/gcc": "gcc",
    "/usr/sbin/ip": "iproute2",
    "/usr/bin/nsenter": "util-linux",
    "/usr/bin/unshare": "util-linux",
    # srun --mpi=pmix (every worker and Dynamo frontend step) loads libpmix.so from here
    "/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so": "libpmix-dev",
}


class SlurmLabError(Exception):
    """The slurm-lab cluster could not be started, stopped or driven."""


def find_missing_requirement() -> str | None:
    """Why this machine cannot run the cluster, or None when it can."""
    uid = os.geteuid()
    if uid != 0:
        return (
            f"the e2e tier needs root (this process runs as uid {uid}): slurm-lab creates "
            "network namespaces and runs slurmctld/slurmd; run pytest as root"
        )
    missing = [f"{path} ({pkg})" for path, pkg in REQUIRED_FILES.items() if not Path(path).exists()]
    if missing:
        return f"missing {', '.join(missing)}; install them with: {INSTALL_COMMAND} (as root)"
    return None


def slurm_free_environ(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` without the variables that would tie a Slurm client to another cluster or job."""
    prefixes = ("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "SLURMLAB_")
    return {k: v for k, v in base.items() if not k.startswith(prefixes)}


@dataclass(frozen=True, kw_only=True)
class SlurmCluster:
    """A running slurm-lab cluster, as described by its ``cluster.json``."""

    instance: int
    directory: Path
    slurm_conf: Path
    slurm_version: str
    mode: str
    partition: str
    head_address: str
    nodes: tuple[str, ...]
    addresses: Mapping[str, str]
    gpus_per_node: int
    pyxis_stub: bool
    start_seconds: float

    @classmethod
    def from_description(cls, path: Path, *, start_seconds: float) -> SlurmCluster:
        raw = json.loads(path.read_text())
        nodes = tuple(str(n["name"]) for n in raw["nodes"])
        return cls(
            instance=int(raw["instance"]),
            directory=path.parent,
            slurm_conf=Path(raw["slurm_conf"]),
            slurm_version=str(raw["slurm_version"]),
            mode=str(raw["mode"]),
            partition=str(raw["partition"]),
            head_address=str(raw["head_address"]),
            nodes=nodes,
            addresses={str(n["name"]): str(n["address"]) for n in raw["nodes"]},
            gpus_per_node=int(raw["gpus_per_node"]),
            pyxis_stub=bool(raw["pyxis_stub"]),
            start_seconds=start_seconds,
        )

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment a Slurm client needs to talk to this cluster (and only to it)."""
        env = slurm_free_environ(os.environ)
        env["SLURM_CONF"] = str(self.slurm_conf)
        env.update(extra or {})
        return env

    def run(
        self,
        args: Sequence[str],
        *,
        extra_env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command (``srun``, ``scontrol``...) against this cluster."""
        proc = subprocess.run(
            list(args),
            env=self.env(extra_env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise SlurmLabError(
                f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.strip() or proc.stdout}"
            )
        return proc

    def sbatch(
        self,
        args: Sequence[str],
        script: Path,
        *,
        extra_env: Mapping[str, str] | None = None,
    ) -> int:
        """Submit ``script`` and return the job id."""
        out = self.run(["sbatch", "--parsable", *args, str(script)], extra_env=extra_env).stdout
        job_id = out.strip().split(";")[0]
        if not job_id.isdigit():
            raise SlurmLabError(f"sbatch {script} printed no job id: {out!r}")
        return int(job_id)

    def job_state(self, job_id: int) -> str:
        out = self.run(["scontrol", "-o", "show", "job", str(job_id)]).stdout
        for token in out.split():
            if token.startswith("JobState="):
                return token.removeprefix("JobState=")
        raise SlurmLabError(f"scontrol show job {job_id} has no JobState: {out!r}")

    def wait_job(self, job_id: int, *, timeout: float = 60.0) -> str:
        """Poll until job ``job_id`` reaches a terminal state; return that state."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.job_state(job_id)
            if state in TERMINAL_STATES:
                return state
            if time.monotonic() > deadline:
                raise SlurmLabError(f"job {job_id} still {state} after {timeout:.0f} s")
            time.sleep(0.1)


@dataclass
class E2EReport:
    """What the terminal summary says about the e2e tier."""

    skipped_reason: str | None = None
    cluster: SlurmCluster | None = None
    stop_seconds: float | None = None


REPORT_KEY = pytest.StashKey[E2EReport]()


def _report(config: pytest.Config) -> E2EReport:
    return config.stash.setdefault(REPORT_KEY, E2EReport())


def _alive_controller(instance: int) -> bool:
    """True when a slurmctld of this instance runs (e.g. started by hand, outside any lock)."""
    pid_file = LOCK_DIR / f"cluster{instance}" / "run" / "slurmctld.pid"
    try:
        pid = int(pid_file.read_text().strip())
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError):
        return False
    return comm == "slurmctld"


def _claim_instance() -> tuple[int, int]:
    """Lock the first free slurm-lab instance; return (instance, lock fd)."""
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    for instance in range(INSTANCES):
        fd = os.open(LOCK_DIR / f"instance{instance}.lock", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if _alive_controller(instance):
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            continue
        return instance, fd
    raise SlurmLabError(
        f"all {INSTANCES} slurm-lab instances are in use (locks in {LOCK_DIR}); "
        "stop a cluster with: bash tools/slurm-lab/stop-cluster.sh (SLURMLAB_INSTANCE=N)"
    )


def _lab_env(instance: int) -> dict[str, str]:
    env = slurm_free_environ(os.environ)
    env.update(
        SLURMLAB_INSTANCE=str(instance),
        SLURMLAB_MODE="netns",  # the product needs one address and hostname per node
        SLURMLAB_PYXIS_STUB="1",
    )
    return env


def _start(instance: int) -> SlurmCluster:
    t0 = time.monotonic()
    proc = subprocess.run(
        ["bash", str(LAB / "start-cluster.sh"), str(NODES), str(GPUS_PER_NODE)],
        env=_lab_env(instance),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise SlurmLabError(
            f"tools/slurm-lab/start-cluster.sh {NODES} {GPUS_PER_NODE} (instance {instance}) "
            f"exited {proc.returncode}:\n{tail}"
        )
    description = LOCK_DIR / f"cluster{instance}" / "cluster.json"
    return SlurmCluster.from_description(description, start_seconds=time.monotonic() - t0)


def _stop(instance: int) -> float:
    t0 = time.monotonic()
    proc = subprocess.run(
        ["bash", str(LAB / "stop-cluster.sh")],
        env=_lab_env(instance),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise SlurmLabError(
            f"tools/slurm-lab/stop-cluster.sh (instance {instance}) exited {proc.returncode}: "
            f"{proc.stderr.strip()}"
        )
    return time.monotonic() - t0


@contextlib.contextmanager
def _sigterm_raises_keyboard_interrupt() -> Iterator[None]:
    """Let a SIGTERM to pytest unwind like Ctrl-C, so that the cluster is stopped."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture(scope="session")
def slurm_cluster(request: pytest.FixtureRequest) -> Iterator[SlurmCluster]:
    """A real 3-node, 4-GPU Slurm cluster for the session (see the module docstring)."""
    report = _report(request.config)
    reason = find_missing_requirement()
    if reason is not None:
        report.skipped_reason = reason
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but the e2e tier cannot run: {reason}", pytrace=False)
        pytest.skip(reason)
    instance, lock_fd = _claim_instance()
    try:
        with _sigterm_raises_keyboard_interrupt():
            try:
                cluster = _start(instance)
                report.cluster = cluster
                yield cluster
            finally:
                report.stop_seconds = _stop(instance)
    finally:
        fcntl.flock(lock_fd, fcntl.LOCK_UN)
        os.close(lock_fd)


@pytest.fixture(scope="session")
def srt_session(
    slurm_cluster: SlurmCluster, tmp_path_factory: pytest.TempPathFactory
) -> SrtOnSlurm:
    """srtctl configured for this session's cluster: a generated srtslurm.yaml and output
    folder in a temporary folder (every node shares this machine's filesystem)."""
    return SrtOnSlurm.create(
        slurm_conf=slurm_cluster.slurm_conf,
        partition=slurm_cluster.partition,
        nodes=slurm_cluster.nodes,
        gpus_per_node=slurm_cluster.gpus_per_node,
        workdir=tmp_path_factory.mktemp("srt"),
    )


SRT_KEY = pytest.StashKey[SrtOnSlurm]()


@pytest.fixture
def srt(srt_session: SrtOnSlurm, request: pytest.FixtureRequest) -> Iterator[SrtOnSlurm]:
    """``srt_session`` for one test: remembers the jobs the test submits, so that a failing test
    reports each job's diagnosis and log tails, and cancels any job the test left queued."""
    srt = SrtOnSlurm(
        slurm_conf=srt_session.slurm_conf,
        config_path=srt_session.config_path,
        output_dir=srt_session.output_dir,
        pmix_dir=srt_session.pmix_dir,
        nodes=srt_session.nodes,
    )
    request.node.stash[SRT_KEY] = srt
    yield srt
    left = [job.job_id for job in srt.submitted if srt.in_queue(job.job_id)]
    if left:
        srt.run(["scancel", *left])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    srt = item.stash.get(SRT_KEY, None)
    if srt is None or report.when != "call" or not report.failed:
        return
    for job in srt.submitted:
        report.sections.append((f"srt job {job.job_id}", srt.diagnose(job)))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.e2e)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """One line saying whether the tier ran (on which cluster) or why not, added to the lines the
    root conftest prints at the end of the run (also from an xdist worker)."""
    config = session.config
    report = config.stash.get(REPORT_KEY, None)
    lines: list[str] | None = getattr(config, "srt_summary_lines", None)
    if report is None or lines is None:
        return
    if report.skipped_reason is not None:
        required = os.environ.get(REQUIRE_ENV) == "1"
        verb = "FAILED (SRT_REQUIRE_E2E=1)" if required else "skipped"
        lines.append(f"e2e tier {verb}: {report.skipped_reason}")
    elif report.cluster is not None:
        c = report.cluster
        stopped = "not stopped" if report.stop_seconds is None else f"{report.stop_seconds:.2f} s"
        lines.append(
            f"e2e tier ran on slurm-lab instance {c.instance}: Slurm {c.slurm_version}, "
            f"{len(c.nodes)} nodes x {c.gpus_per_node} GPUs ({c.mode}); "
            f"start {c.start_seconds:.2f} s, stop {stopped}"
        )

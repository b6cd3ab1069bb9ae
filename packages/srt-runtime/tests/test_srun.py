"""The Slurm launcher without Slurm: argv construction, step lookup, signalling, and a start
through a stand-in ``srun`` (tests/fakes/fake_srun.py)."""

from __future__ import annotations

import signal
from pathlib import Path

from rt_fakes import RecordingRunner
from rt_plans import FAKES, fake, read_trace, spec, wait_for_text

from srt_planner.plan import ContainerSpec, Mount
from srt_runtime.srun import SrunLauncher, build_scancel_argv, build_srun_argv, parse_steps


def test_a_bare_step() -> None:
    s = spec("agg_0_node-01", ("python", "-m", "engine", "--port", "8000"))
    assert build_srun_argv(s, job_id="77", log_path=Path("/out/77/logs/w.out")) == (
        "srun",
        "--jobid",
        "77",
        "--overlap",
        "--nodes",
        "1",
        "--ntasks",
        "1",
        "--nodelist",
        "node-01",
        "--output",
        "/out/77/logs/w.out",
        "--job-name=agg_0_node-01",
        "python",
        "-m",
        "engine",
        "--port",
        "8000",
    )


def test_a_container_step_on_two_nodes_of_a_het_group() -> None:
    s = spec(
        "decode_0_node-01",
        ("dynamo",),
        het_group=1,
        container=ContainerSpec(
            image="nvcr.io/x/y:1",
            remap_root=True,
            mounts=(
                Mount(host="/logs/77", container="/logs", source="built-in"),
                Mount(host="/models/m", container="/model", readonly=True, source="recipe"),
            ),
        ),
    )
    s = type(s)(
        **{**{f: getattr(s, f) for f in s.__struct_fields__}, "nodes": ("node-01", "node-02")}
    )
    assert build_srun_argv(s, job_id="77", log_path=Path("/l/w.out")) == (
        "srun",
        "--jobid",
        "77",
        "--overlap",
        "--nodes",
        "2",
        "--ntasks",
        "2",
        "--nodelist",
        "node-01,node-02",
        "--het-group=1",
        "--output",
        "/l/w.out",
        "--container-image",
        "nvcr.io/x/y:1",
        "--no-container-entrypoint",
        "--no-container-mount-home",
        "--container-mounts",
        "/logs/77:/logs,/models/m:/model:ro",
        "--container-remap-root",
        "--job-name=decode_0_node-01",
        "dynamo",
    )


def test_the_planners_srun_argv_is_used_verbatim() -> None:
    s = spec("x", ("true",), srun_argv=("srun", "--overlap", "--job-name=x", "true"))
    assert build_srun_argv(s, job_id="77", log_path=Path("/l")) == (
        "srun",
        "--overlap",
        "--job-name=x",
        "true",
    )


def test_steps_and_scancel() -> None:
    out = "77.0 service_etcd\n77.3 agg_0_node-01\n\n77.batch batch extra\n"
    assert parse_steps(out) == {"service_etcd": "77.0", "agg_0_node-01": "77.3"}
    assert build_scancel_argv("77.3", signal.SIGTERM) == (
        "scancel",
        "--signal=TERM",
        "--full",
        "77.3",
    )


def test_a_step_is_started_and_signalled_through_scancel(tmp_path: Path, trace: Path) -> None:
    runner = RecordingRunner({"squeue": (0, "77.4 agg_0\n"), "scancel": (0, "")})
    launcher = SrunLauncher(tmp_path, job_id="77", srun=str(FAKES / "fake_srun.py"), runner=runner)
    handle = launcher.start(spec("agg_0", fake("trace", trace, "on-term", "say", "up", "forever")))
    wait_for_text(tmp_path / "agg_0.out", "up\n")
    handle.signal(signal.SIGTERM)
    assert runner.calls[-1] == ("scancel", "--signal=TERM", "--full", "77.4")
    assert runner.calls[0] == ("squeue", "--steps", "--jobs=77", "--noheader", "--format=%i %j")
    assert handle.poll() is None  # scancel is recorded, not real: the step still runs
    handle.kill()
    assert handle.wait(10) is not None
    assert (
        (tmp_path / "agg_0.out")
        .read_text()
        .startswith(
            f"fake-srun options: --jobid 77 --overlap --nodes 1 --ntasks 1 --nodelist node-01 "
            f"--output {tmp_path / 'agg_0.out'} --job-name=agg_0\n"
        )
    )


def test_a_failing_scancel_does_not_abort_the_step_through_its_srun_client(
    tmp_path: Path, trace: Path
) -> None:
    # Slurm 22.05, multi-node job: scancel exits 1 ("Invalid job id specified" from the nodes
    # without the step) although the step was signalled; SIGTERM to srun would SIGKILL the step.
    runner = RecordingRunner({"squeue": (0, "77.4 agg_0\n"), "scancel": (1, "")})
    launcher = SrunLauncher(tmp_path, job_id="77", srun=str(FAKES / "fake_srun.py"), runner=runner)
    handle = launcher.start(spec("agg_0", fake("trace", trace, "on-term", "say", "up", "forever")))
    wait_for_text(tmp_path / "agg_0.out", "up\n")
    handle.signal(signal.SIGTERM)
    assert runner.calls[-1] == ("scancel", "--signal=TERM", "--full", "77.4")
    assert handle.wait(0.5) is None
    assert read_trace(trace) == ["agg_0 start"]
    handle.kill()
    assert handle.wait(10) is not None


def test_without_scancel_the_srun_client_is_signalled(tmp_path: Path, trace: Path) -> None:
    launcher = SrunLauncher(
        tmp_path,
        job_id="77",
        srun=str(FAKES / "fake_srun.py"),
        runner=RecordingRunner({}),
    )
    handle = launcher.start(spec("agg_0", fake("trace", trace, "on-term", "say", "up", "forever")))
    wait_for_text(tmp_path / "agg_0.out", "up\n")
    handle.signal(signal.SIGTERM)
    assert handle.wait(10) == 0
    assert read_trace(trace) == ["agg_0 start", "agg_0 term"]


def test_container_runtime_none_puts_the_interpreter_first_on_path(tmp_path: Path) -> None:
    launcher = SrunLauncher(
        tmp_path,
        job_id="77",
        srun=str(FAKES / "fake_srun.py"),
        runner=RecordingRunner({}),
        base_env={"PATH": "/usr/bin:/bin"},
        python="/opt/venv/bin/python",
    )
    handle = launcher.start(spec("env", ("/usr/bin/printenv", "PATH")))
    assert handle.wait(10) == 0
    assert (tmp_path / "env.out").read_text().splitlines()[-1] == "/opt/venv/bin:/usr/bin:/bin"

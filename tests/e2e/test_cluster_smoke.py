"""The slurm-lab cluster does what srt's runtime needs from Slurm.

The supervisor starts one ``srun --overlap --nodes=1 --ntasks=1 -w <node>`` per process inside
one sbatch allocation, relies on node names resolving to per-node addresses, on GRES setting
``CUDA_VISIBLE_DEVICES``, on pyxis' ``--container-*`` flags being accepted, and on ``scancel``
ending every task. Each test proves one of those on the real cluster.
"""

from __future__ import annotations

import sys
import textwrap
import time
import uuid
from pathlib import Path

WAIT_S = 30.0


def write_script(path: Path, body: str) -> Path:
    """Write an sbatch script: a bash shebang, ``set -eu``, then ``body`` (dedented)."""
    path.write_text("#!/bin/bash\nset -eu\n" + textwrap.dedent(body).lstrip("\n"))
    return path


def live_pids_running(program: str, *args: str) -> list[int]:
    """PIDs of live (non-zombie) processes running ``program args...`` (srun passes the program
    by its full path, so argv[0] is compared by its last component)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        running = state not in ("Z", "X")
        if running and argv and Path(argv[0]).name == program and argv[1:] == list(args):
            found.append(int(proc.name))
    return found


def live_steps_of(job_id: int) -> list[int]:
    """PIDs of slurmstepd processes that still serve job ``job_id``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if cmdline.startswith("slurmstepd:") and f"[{job_id}." in cmdline:
            found.append(int(proc.name))
    return found


def test_the_cluster_has_named_nodes_with_gpus(slurm_cluster) -> None:
    # not the node state: other e2e tests share this session's cluster
    out = slurm_cluster.run(["sinfo", "-h", "-N", "-o", "%N %G"]).stdout.split("\n")
    rows = sorted({line for line in out if line})
    assert rows == [f"{n} gpu:{slurm_cluster.gpus_per_node}" for n in slurm_cluster.nodes]
    assert slurm_cluster.nodes == ("node1", "node2", "node3")
    assert len(set(slurm_cluster.addresses.values())) == 3


def test_sbatch_runs_one_srun_step_per_named_node(slurm_cluster, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "steps.sbatch",
        r"""
        for n in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
          srun --overlap --nodes=1 --ntasks=1 -w "$n" --job-name="worker_$n" \
            sh -c 'echo "$SLURMD_NODENAME $(hostname) $SLURM_STEP_ID"' >"$OUT/$n.out" &
        done
        wait
        """,
    )
    job = slurm_cluster.sbatch(
        ["-N", "3", "--ntasks-per-node=1", "-o", str(tmp_path / "job.out")],
        script,
        extra_env={"OUT": str(tmp_path)},
    )
    assert slurm_cluster.wait_job(job, timeout=WAIT_S) == "COMPLETED"
    steps = set()
    for node in slurm_cluster.nodes:
        name, hostname, step = (tmp_path / f"{node}.out").read_text().split()
        assert (name, hostname) == (node, node)
        steps.add(step)
    assert len(steps) == 3


def test_overlap_steps_run_at_the_same_time_on_every_node(slurm_cluster, tmp_path: Path) -> None:
    # 2 steps per node; each waits until all 6 have started, so they can only finish when all
    # of them ran concurrently inside a 1-task-per-node allocation (what --overlap allows).
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    script = write_script(
        tmp_path / "overlap.sbatch",
        r"""
        for n in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
          for k in a b; do
            srun --overlap --nodes=1 --ntasks=1 -w "$n" sh -c '
              touch "$BARRIER/$SLURMD_NODENAME.$SLURM_STEP_ID"
              for i in $(seq 200); do
                started=$(ls "$BARRIER" | wc -l)
                if [ "$started" -ge 6 ]; then echo "$SLURMD_NODENAME passed"; exit 0; fi
                sleep 0.1
              done
              echo "$SLURMD_NODENAME timed out"; exit 1' &
          done
        done
        wait
        """,
    )
    out = tmp_path / "job.out"
    job = slurm_cluster.sbatch(
        ["-N", "3", "--ntasks-per-node=1", "-o", str(out)],
        script,
        extra_env={"BARRIER": str(barrier)},
    )
    assert slurm_cluster.wait_job(job, timeout=WAIT_S) == "COMPLETED", out.read_text()
    assert sorted(out.read_text().split("\n")) == [
        "",
        "node1 passed",
        "node1 passed",
        "node2 passed",
        "node2 passed",
        "node3 passed",
        "node3 passed",
    ]
    assert len(list(barrier.iterdir())) == 6


def test_scancel_of_a_running_job_leaves_no_process(slurm_cluster, tmp_path: Path) -> None:
    duration = f"{3000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6}"
    script = write_script(
        tmp_path / "cancel.sbatch",
        f"""
        for n in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
          srun --overlap --nodes=1 --ntasks=1 -w "$n" sleep {duration} &
        done
        wait
        """,
    )
    job = slurm_cluster.sbatch(["-N", "3", "-o", str(tmp_path / "job.out")], script)
    deadline = time.monotonic() + WAIT_S
    while len(live_pids_running("sleep", duration)) < 3:
        assert time.monotonic() < deadline, "the 3 sleep tasks did not start"  # hang guard: WAIT_S
        time.sleep(0.1)
    assert live_steps_of(job)

    slurm_cluster.run(["scancel", str(job)])
    assert slurm_cluster.wait_job(job, timeout=WAIT_S) == "CANCELLED"
    deadline = time.monotonic() + 15
    while live_pids_running("sleep", duration) or live_steps_of(job):
        assert time.monotonic() < deadline, (  # hang guard: 15 s to reap a cancelled step
            f"left after scancel: tasks {live_pids_running('sleep', duration)}, "
            f"slurmstepd {live_steps_of(job)}"
        )
        time.sleep(0.1)


def test_gres_gpu_requests_set_cuda_visible_devices(slurm_cluster) -> None:
    whole = slurm_cluster.run(
        ["srun", "-N3", "--ntasks-per-node=1", "--gpus-per-node=4", "sh", "-c",
         'echo "$SLURMD_NODENAME=$CUDA_VISIBLE_DEVICES"'],
    ).stdout  # fmt: skip
    assert sorted(whole.split()) == ["node1=0,1,2,3", "node2=0,1,2,3", "node3=0,1,2,3"]
    part = slurm_cluster.run(
        ["srun", "-N1", "-w", "node2", "--gres=gpu:2", "printenv", "CUDA_VISIBLE_DEVICES"]
    ).stdout
    assert part == "0,1\n"
    too_many = slurm_cluster.run(
        ["srun", "-N1", "--gpus-per-node=5", "true"], check=False, timeout=WAIT_S
    )
    assert too_many.returncode != 0
    assert "Requested node configuration is not available" in too_many.stderr


def test_pyxis_flags_are_accepted_and_seen_by_the_task(slurm_cluster) -> None:
    assert slurm_cluster.pyxis_stub
    out = slurm_cluster.run(
        ["srun", "-N1", "-w", "node3",
         "--container-image=nvcr.io#nvidia/pytorch:24.01-py3",
         "--container-mounts=/models:/models,/logs:/logs",
         "--no-container-mount-home",
         "sh", "-c",
         'echo "$SLURMLAB_PYXIS_CONTAINER_IMAGE|$SLURMLAB_PYXIS_CONTAINER_MOUNTS|'
         '$SLURMLAB_PYXIS_NO_CONTAINER_MOUNT_HOME"'],
    ).stdout  # fmt: skip
    assert out == "nvcr.io#nvidia/pytorch:24.01-py3|/models:/models,/logs:/logs|1\n"


def test_a_node_reaches_another_by_name_over_tcp(slurm_cluster, tmp_path: Path) -> None:
    # what a worker does to reach etcd/NATS on the head node: a server on node1, a client on
    # node3 that connects to "node1"; the server sees node3's own address.
    server = (
        "import socket\n"
        "s = socket.socket(); s.bind(('0.0.0.0', 29500)); s.listen(1); s.settimeout(20)\n"
        "c, addr = s.accept(); print(c.recv(64).decode(), 'from', addr[0], flush=True)\n"
    )
    client = (
        "import os, socket, time\n"
        "for _ in range(100):\n"
        "    try:\n"
        "        c = socket.create_connection(('node1', 29500), timeout=5); break\n"
        "    except OSError:\n"
        "        time.sleep(0.1)\n"
        "c.sendall(os.environ['SLURMD_NODENAME'].encode())\n"
    )
    (tmp_path / "server.py").write_text(server)
    (tmp_path / "client.py").write_text(client)
    py = sys.executable
    script = write_script(
        tmp_path / "tcp.sbatch",
        f'srun --overlap -N1 -n1 -w node1 {py} "$OUT/server.py" >"$OUT/server.out" &\n'
        f'srun --overlap -N1 -n1 -w node3 {py} "$OUT/client.py"\n'
        "wait\n",
    )
    job = slurm_cluster.sbatch(
        ["-N", "3", "-w", "node[1-3]", "-o", str(tmp_path / "job.out")],
        script,
        extra_env={"OUT": str(tmp_path)},
    )
    assert slurm_cluster.wait_job(job, timeout=WAIT_S) == "COMPLETED", (
        tmp_path / "job.out"
    ).read_text()
    assert (tmp_path / "server.out").read_text() == (
        f"node3 from {slurm_cluster.addresses['node3']}\n"
    )

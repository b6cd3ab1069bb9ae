"""Who listens on a TCP port of this host, from ``/proc`` (the local launcher's port checks).

``/proc/net/tcp`` and ``/proc/net/tcp6`` list the listening sockets (state ``0A``) with their
inode; ``/proc/<pid>/fd/*`` links to ``socket:[<inode>]`` name the processes holding them
(readable for this user's processes only; another user's holder is "another process").
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from srt_planner.plan import ProcessSpec
from srt_runtime.errors import HealthGateError, LaunchError

__all__ = [
    "Listener",
    "check_port_owner",
    "check_ports_free",
    "describe_holder",
    "find_listeners",
    "process_group",
    "read_listening_inodes",
]

_PROC = Path("/proc")
_LISTEN = "0A"
#: How many busy ports a refusal names before "and N more".
_SHOWN = 3


@dataclass(frozen=True)
class Listener:
    """A port somebody listens on: the holders' pids (empty: not one of this user's processes)."""

    port: int
    pids: tuple[int, ...]


def read_listening_inodes(ports: Iterable[int], proc: Path = _PROC) -> dict[int, set[str]]:
    """``{port: {socket inode, ...}}`` for the ``ports`` that have a listening TCP socket."""
    wanted = set(ports)
    found: dict[int, set[str]] = {}
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _LISTEN:
                continue
            port = int(fields[1].rsplit(":", 1)[1], 16)
            if port in wanted:
                found.setdefault(port, set()).add(fields[9])
    return found


def _socket_owners(inodes: set[str], proc: Path) -> dict[str, set[int]]:
    links = {f"socket:[{inode}]": inode for inode in inodes}
    owners: dict[str, set[int]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue  # gone, or another user's
        for fd in fds:
            try:
                target = str(fd.readlink())
            except OSError:
                continue
            if target in links:
                owners.setdefault(links[target], set()).add(int(entry.name))
    return owners


def find_listeners(ports: Iterable[int], proc: Path = _PROC) -> list[Listener]:
    """The ``ports`` (ascending) that something listens on, each with its holders' pids."""
    inodes = read_listening_inodes(ports, proc)
    if not inodes:
        return []
    owners = _socket_owners(set().union(*inodes.values()), proc)
    return [
        Listener(port, tuple(sorted({pid for i in inodes[port] for pid in owners.get(i, ())})))
        for port in sorted(inodes)
    ]


def process_group(pid: int, proc: Path = _PROC) -> int | None:
    """The process group of ``pid`` (``/proc/<pid>/stat`` field 5), None if it is gone."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[2])


def describe_holder(listener: Listener, proc: Path = _PROC) -> str:
    """``pid 123 (`etcd --data-dir ...`)``, or ``another process`` when none is readable."""
    if not listener.pids:
        return "another process (not one of this user's)"
    parts = []
    for pid in listener.pids[:2]:
        try:
            raw = (proc / str(pid) / "cmdline").read_bytes()
        except OSError:
            parts.append(f"pid {pid}")
            continue
        argv = shlex.join(p.decode(errors="replace") for p in raw.split(b"\0") if p)
        argv = argv if len(argv) <= 80 else argv[:77] + "..."
        parts.append(f"pid {pid} (`{argv}`)")
    return ", ".join(parts)


def check_ports_free(specs: Iterable[ProcessSpec], proc: Path = _PROC) -> None:
    """Raise LaunchError naming each busy port of ``specs`` (all bind on this host with the local
    launcher), its process and its holder, before anything starts."""
    wanted: dict[int, str] = {}
    for spec in specs:
        for label, port in spec.ports.items():
            if port > 0:
                wanted.setdefault(port, f"{spec.name} {label}")
    busy = find_listeners(wanted, proc)
    if not busy:
        return
    named = [f"{b.port} ({wanted[b.port]}) is held by {describe_holder(b, proc)}" for b in busy]
    more = f"; and {len(named) - _SHOWN} more" if len(named) > _SHOWN else ""
    raise LaunchError(
        f"port {'; port '.join(named[:_SHOWN])}{more}: the plan's ports must be free on this "
        "host before a local job starts; stop the job or program holding them (srtctl cancel "
        "<job_id> for another local job) and apply again"
    )


def check_port_owner(url: str, groups: Collection[int], proc: Path = _PROC) -> None:
    """After the health gate passed on ``url``: its port must be held by a process of one of the
    job's process ``groups`` (the local launcher's processes lead their groups), else the gate
    talked to another job or program; HealthGateError names the holder."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    listeners = find_listeners([port], proc)
    holder = listeners[0] if listeners else Listener(port, ())
    if any(process_group(pid, proc) in groups for pid in holder.pids):
        return
    held = (
        f"held by {describe_holder(holder, proc)}"
        if listeners
        else "not listened on by any process of this host's network namespace"
    )
    raise HealthGateError(
        f"the health gate {url} answered, but port {port} is {held}, not by a process of this "
        "job: the gate talked to another job or program; stop it (srtctl cancel <job_id> for "
        "another local job) and apply again"
    )

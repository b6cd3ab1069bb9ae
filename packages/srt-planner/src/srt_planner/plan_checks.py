"""The last checks of a finished plan: every process sits on a node of the allocation, process
names are unique, and no port is bound twice on one host (a service's readiness port included).
Pure; raises PlanningError."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from srt_planner.errors import PlanningError
from srt_planner.hostlist import compress_hostlist
from srt_planner.plan import HttpProbe, ProcessSpec, TcpProbe
from srt_planner.ports import check_port_conflicts

__all__ = ["check_placement"]


def _bindings(processes: Sequence[ProcessSpec], local: bool) -> Iterator[tuple[str, str, str, int]]:
    for spec in processes:
        # Ports belong to the step's first node (the leader of an MPI endpoint).
        for node in spec.nodes[:1]:
            host = "localhost" if local else node
            for name, port in spec.ports.items():
                yield host, spec.name, name, port
            match spec.readiness:
                case TcpProbe(port=port) | HttpProbe(port=port) if spec.kind == "service":
                    if port not in spec.ports.values():
                        yield host, spec.name, "readiness", port
                case _:
                    pass


def check_placement(processes: Sequence[ProcessSpec], nodes: tuple[str, ...], local: bool) -> None:
    """Raise PlanningError for a process outside ``nodes``, a repeated process name, or a port
    bound twice on one host (``local``: every process binds on localhost)."""
    allowed = set(nodes)
    for spec in processes:
        for node in spec.nodes:
            if node not in allowed:
                raise PlanningError(
                    f"{spec.name} is placed on {node}, which is not in the allocation "
                    f"({compress_hostlist(nodes)})"
                )
    names = [spec.name for spec in processes]
    if len(names) != len(set(names)):
        duplicates = sorted({n for n in names if names.count(n) > 1})
        raise PlanningError(f"process names must be unique; repeated: {', '.join(duplicates)}")
    check_port_conflicts(_bindings(processes, local))

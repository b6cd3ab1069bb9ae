"""GPU packing: the worked examples of docs/planner.md#gpu-packing and the Q7 validations."""

from __future__ import annotations

import pytest

from srt_planner.errors import PlanningError
from srt_planner.gpu_packing import Endpoint, RoleLayout, pack_endpoints

NODES = ("n0", "n1", "n2", "n3", "n4", "n5")


def _layout(
    endpoints: tuple[Endpoint, ...],
) -> list[tuple[str, int, tuple[str, ...], tuple[tuple[int, ...], ...]]]:
    return [(e.role, e.index, e.nodes, e.gpus) for e in endpoints]


def test_e1_full_and_half_nodes() -> None:
    got = pack_endpoints(
        [
            RoleLayout(role="prefill", workers=2, gpus_per_worker=8),
            RoleLayout(role="decode", workers=4, gpus_per_worker=4),
        ],
        NODES[:4],
        8,
    )
    full, low, high = tuple(range(8)), (0, 1, 2, 3), (4, 5, 6, 7)
    assert _layout(got) == [
        ("prefill", 0, ("n0",), (full,)),
        ("prefill", 1, ("n1",), (full,)),
        ("decode", 0, ("n2",), (low,)),
        ("decode", 1, ("n2",), (high,)),
        ("decode", 2, ("n3",), (low,)),
        ("decode", 3, ("n3",), (high,)),
    ]


def test_e2_colocated_decode_uses_free_gpus() -> None:
    got = pack_endpoints(
        [
            RoleLayout(role="prefill", workers=2, gpus_per_worker=2),
            RoleLayout(role="decode", workers=1, gpus_per_worker=4, colocate=True),
        ],
        NODES[:1],
        8,
    )
    assert _layout(got) == [
        ("prefill", 0, ("n0",), ((0, 1),)),
        ("prefill", 1, ("n0",), ((2, 3),)),
        ("decode", 0, ("n0",), ((4, 5, 6, 7),)),
    ]


def test_e5_multi_node_prefill() -> None:
    got = pack_endpoints(
        [
            RoleLayout(role="prefill", workers=1, gpus_per_worker=16),
            RoleLayout(role="decode", workers=2, gpus_per_worker=4),
        ],
        NODES[:3],
        8,
    )
    assert got[0].nodes == ("n0", "n1")
    assert [(e.nodes, e.gpus) for e in got[1:]] == [
        (("n2",), ((0, 1, 2, 3),)),
        (("n2",), ((4, 5, 6, 7),)),
    ]


def test_e6_spread_workers() -> None:
    got = pack_endpoints(
        [RoleLayout(role="decode", workers=2, gpus_per_worker=4)], NODES[:2], 8, spread_workers=True
    )
    assert [(e.nodes, e.gpus) for e in got] == [
        (("n0",), ((0, 1, 2, 3),)),
        (("n1",), ((0, 1, 2, 3),)),
    ]


@pytest.mark.parametrize(
    ("nodes", "decode_node", "decode_gpus"),
    [(NODES[:2], "n1", (0, 1, 2, 3)), (NODES[:1], "n0", (4, 5, 6, 7))],
)
def test_e7_prefill_decode_separation(
    nodes: tuple[str, ...], decode_node: str, decode_gpus: tuple[int, ...]
) -> None:
    got = pack_endpoints(
        [
            RoleLayout(role="prefill", workers=1, gpus_per_worker=4),
            RoleLayout(role="decode", workers=1, gpus_per_worker=4),
        ],
        nodes,
        8,
    )
    assert (got[1].nodes, got[1].gpus) == ((decode_node,), (decode_gpus,))


def test_e10_trtllm_packed_dep6() -> None:
    got = pack_endpoints(
        [RoleLayout(role="prefill", workers=2, gpus_per_worker=6, packed=True)], ("A", "B", "C"), 4
    )
    assert _layout(got) == [
        ("prefill", 0, ("A", "B"), ((0, 1, 2, 3), (0, 1))),
        ("prefill", 1, ("C", "B"), ((0, 1, 2, 3), (2, 3))),
    ]


def test_e4_overlap_is_rejected() -> None:
    with pytest.raises(PlanningError) as info:
        pack_endpoints(
            [
                RoleLayout(role="prefill", workers=1, gpus_per_worker=4),
                RoleLayout(role="decode", workers=1, gpus_per_worker=8, colocate=True),
            ],
            NODES[:1],
            8,
        )
    assert str(info.value) == (
        "$.roles.decode: decode worker 0 does not fit: GPU 0 of n0 already belongs to prefill "
        "worker 0; colocated roles must fit in the GPUs the earlier roles leave free (check "
        "roles.decode.gpus and roles.decode.workers)"
    )


def test_e4_running_out_of_nodes_is_a_planning_error() -> None:
    with pytest.raises(PlanningError) as info:
        pack_endpoints(
            [
                RoleLayout(role="prefill", workers=2, gpus_per_worker=6),
                RoleLayout(role="decode", workers=2, gpus_per_worker=2, colocate=True),
            ],
            NODES[:2],
            8,
        )
    assert str(info.value) == (
        "$.roles.decode: decode worker 1 needs 2 GPU(s) but the 2 worker node(s) x 8 GPUs (n[0-1]) "
        "are used up by the workers before it; raise roles.decode.nodes or lower "
        "roles.decode.workers / roles.decode.gpus"
    )

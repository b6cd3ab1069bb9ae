"""A small Mooncake-format trace (JSON Lines of `timestamp` (ms), `input_length`,
`output_length`, `hash_ids`) for tests and the corpus-run tier: what a trace URL serves there.

Eight rows: aiperf 0.13 decodes a trace of 10 or more `hash_ids` rows in worker processes that
load a local tokenizer folder as a hub id, and fails (docs/telemetry-and-bench.md).
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["TINY_TRACE_ROWS", "write_tiny_trace"]

TINY_TRACE_ROWS: tuple[dict[str, object], ...] = tuple(
    {"timestamp": 40 * i, "input_length": 40 + 8 * (i % 3), "output_length": 6 + i % 2,
     "hash_ids": [1 + i % 3]}
    for i in range(8)
)  # fmt: skip


def write_tiny_trace(path: Path) -> bytes:
    """Write the trace to `path` (parents made) and return its bytes."""
    data = "".join(json.dumps(row) + "\n" for row in TINY_TRACE_ROWS).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data

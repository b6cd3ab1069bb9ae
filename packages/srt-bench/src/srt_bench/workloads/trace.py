"""Mooncake-format traces: read the rows, build each row's prompt from its blocks, schedule them.

A row is `{"timestamp": <ms>, "input_length": N, "output_length": M, "hash_ids": [h0, h1, ...]}`
(other keys are ignored). Hash id `h_i` names the prompt's i-th block of `block_tokens` tokens;
the text of a block is drawn from a generator seeded by the run's seed and the hash id, so two
rows that share a hash id share that block's text and tokens. A row's last block holds the tokens
left (`input_length - i * block_tokens`, its block's first tokens); tokens beyond the blocks its
hash ids cover are the row's own. Rows are replayed in timestamp order at
`(timestamp - first timestamp) / 1000 / speedup` seconds.
"""

from __future__ import annotations

import random
from pathlib import Path

import msgspec

from srt_bench.client import Api, PreparedRequest
from srt_bench.errors import BenchDatasetError
from srt_bench.workloads.config import TraceReplay
from srt_bench.workloads.kv import BlockChain
from srt_bench.workloads.requests import SingleShot, build_body
from srt_bench.workloads.text import PieceMaker

__all__ = ["TraceRow", "build_trace_requests", "read_trace"]


class TraceRow(msgspec.Struct, frozen=True):
    timestamp: float
    input_length: int
    output_length: int
    hash_ids: tuple[int, ...] = ()


_row = msgspec.json.Decoder(TraceRow)
_EXAMPLE = '{"timestamp": 0, "input_length": 1024, "output_length": 64, "hash_ids": [1, 2]}'


def read_trace(path: Path, max_requests: int | None = None) -> list[TraceRow]:
    """The rows (the first `max_requests` non-empty lines), sorted by timestamp (stable)."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise BenchDatasetError(
            f"cannot read the trace {path}: {exc.strerror}; set workload.path to a Mooncake "
            "JSON Lines trace"
        ) from exc
    rows: list[TraceRow] = []
    for number, line in enumerate(lines, start=1):
        if max_requests is not None and len(rows) >= max_requests:
            break
        if not line.strip():
            continue
        try:
            row = _row.decode(line)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise BenchDatasetError(
                f"{path}:{number}: {exc}; each line must look like {_EXAMPLE}"
            ) from exc
        if row.input_length < 1 or row.output_length < 1:
            raise BenchDatasetError(
                f"{path}:{number}: input_length and output_length must be >= 1, got "
                f"{row.input_length} and {row.output_length}"
            )
        rows.append(row)
    if not rows:
        raise BenchDatasetError(f"{path}: the trace has no rows")
    return sorted(rows, key=lambda r: r.timestamp)


class _Blocks:
    """Block texts by hash id (full blocks cached; a partial block is drawn again)."""

    def __init__(self, maker: PieceMaker, seed: int, block_tokens: int) -> None:
        self._maker = maker
        self._seed = seed
        self._block = block_tokens
        self._full: dict[int, str] = {}

    def text(self, hash_id: int, tokens: int) -> str:
        if tokens == self._block and hash_id in self._full:
            return self._full[hash_id]
        ids = self._maker.ids(random.Random(f"trace-block:{self._seed}:{hash_id}"), self._block)
        text = self._maker.decode(ids[:tokens])
        if tokens == self._block:
            self._full[hash_id] = text
        return text


def build_trace_requests(
    maker: PieceMaker,
    rows: list[TraceRow],
    workload: TraceReplay,
    *,
    seed: int,
    api: Api,
    model: str,
) -> SingleShot:
    """One request per row with its due time (deterministic for the seed)."""
    blocks = _Blocks(maker, seed, workload.block_tokens)
    texts: list[str] = []
    covered: list[tuple[int, ...]] = []
    for index, row in enumerate(rows):
        parts: list[str] = []
        sizes: list[int] = []
        left = row.input_length
        for hash_id in row.hash_ids:
            if left <= 0:
                break
            n = min(left, workload.block_tokens)
            parts.append(blocks.text(hash_id, n))
            sizes.append(n)
            left -= n
        if left > 0:
            parts.append(maker.draw(random.Random(f"trace-row:{seed}:{index}"), left))
        texts.append(maker.join(parts))
        covered.append(tuple(sizes))
    ids = maker.encode(texts)
    first = rows[0].timestamp
    offsets = tuple((r.timestamp - first) / 1000.0 / workload.speedup for r in rows)
    requests = tuple(
        PreparedRequest(
            body=build_body(api=api, model=model, contents=[text], max_tokens=row.output_length),
            prompt_tokens=len(i),
        )
        for text, i, row in zip(texts, ids, rows, strict=True)
    )
    chains = tuple(
        BlockChain(keys=row.hash_ids[: len(sizes)], tokens=sizes, prompt_tokens=len(i))
        for row, sizes, i in zip(rows, covered, ids, strict=True)
    )
    return SingleShot(requests=requests, chains=chains, offsets=offsets)

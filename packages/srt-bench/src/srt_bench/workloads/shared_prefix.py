"""Shared-prefix requests: `groups` prefixes reused by a `prefix_ratio` share of the requests.

The group prefixes depend on the run's seed only, so every phase of a run (and its warmup) uses
the same groups, as a server's prompt cache would see them in production; which group a request
uses, its own prefix and its suffix depend on the phase's seed.
"""

from __future__ import annotations

import random

from srt_bench.client import Api, PreparedRequest
from srt_bench.prompts import draw_lengths
from srt_bench.workloads.config import SharedPrefix
from srt_bench.workloads.kv import chain_from_ids
from srt_bench.workloads.requests import SingleShot, build_body
from srt_bench.workloads.text import PieceMaker

__all__ = ["build_group_prefixes", "build_shared_prefix"]


def build_group_prefixes(maker: PieceMaker, workload: SharedPrefix, run_seed: int) -> list[str]:
    rng = random.Random(f"shared-prefix-groups:{run_seed}")
    return [maker.draw(rng, workload.prefix_tokens) for _ in range(workload.groups)]


def build_shared_prefix(
    maker: PieceMaker,
    workload: SharedPrefix,
    *,
    groups: list[str],
    count: int,
    osl: int,
    range_ratio: float,
    seed: int,
    api: Api,
    model: str,
) -> SingleShot:
    """`count` requests (deterministic for the seed and the groups)."""
    rng = random.Random(f"shared-prefix:{seed}")
    texts: list[str] = []
    for _ in range(count):
        if rng.random() < workload.prefix_ratio:
            prefix = groups[rng.randrange(len(groups))]
        else:
            prefix = maker.draw(rng, workload.prefix_tokens)
        texts.append(maker.join([prefix, maker.draw(rng, workload.suffix_tokens)]))
    outputs = draw_lengths(rng, osl, range_ratio, count)
    ids = maker.encode(texts)
    requests = tuple(
        PreparedRequest(
            body=build_body(api=api, model=model, contents=[text], max_tokens=o),
            prompt_tokens=len(i),
        )
        for text, i, o in zip(texts, ids, outputs, strict=True)
    )
    chains = tuple(chain_from_ids(i, workload.kv_block_tokens) for i in ids)
    return SingleShot(requests=requests, chains=chains)

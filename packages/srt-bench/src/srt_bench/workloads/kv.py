"""Prefix hit potential: how much of a phase's prompt tokens a perfect prefix cache could reuse.

A prompt is a chain of blocks (keys with a token count each). Taken in send order, a request's
hit is its longest run of leading blocks that an earlier request of the same window already sent
(a block an earlier request sent only partly counts with the tokens both have). The potential is
hit tokens / prompt tokens: an upper bound on the KV-cache hit rate of an unbounded cache,
independent of the server. Synthetic prompts are cut into `block_tokens` blocks keyed by a hash
chained over their token ids (the tail after the last full block never counts, as in paged KV
caches); a Mooncake trace gives the keys itself (`hash_ids`).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

__all__ = ["BlockChain", "PrefixReuse", "build_prefix_reuse", "chain_from_ids"]


class BlockChain(msgspec.Struct, frozen=True):
    """One prompt as blocks: `keys[i]` covers `tokens[i]` prompt tokens."""

    keys: tuple[int, ...]
    tokens: tuple[int, ...]
    #: All prompt tokens (may exceed `sum(tokens)`: a tail that is no full block).
    prompt_tokens: int


class PrefixReuse(msgspec.Struct, frozen=True, kw_only=True):
    requests: int
    prompt_tokens: int
    hit_tokens: int
    #: Requests whose first block was sent before.
    requests_with_hit: int
    #: hit_tokens / prompt_tokens (None without prompt tokens).
    potential: float | None


def chain_from_ids(ids: Sequence[int], block_tokens: int) -> BlockChain:
    """Full blocks of `block_tokens` ids, each keyed by a hash of its ids and the previous key
    (Python's hash of int tuples does not depend on PYTHONHASHSEED)."""
    keys: list[int] = []
    key = 0
    for start in range(0, len(ids) - block_tokens + 1, block_tokens):
        key = hash((key, *ids[start : start + block_tokens]))
        keys.append(key)
    return BlockChain(keys=tuple(keys), tokens=(block_tokens,) * len(keys), prompt_tokens=len(ids))


def build_prefix_reuse(chains: Sequence[BlockChain]) -> PrefixReuse:
    """The reuse of `chains`, given in send order (pure)."""
    seen: dict[int, int] = {}
    hit_total = 0
    prompt_total = 0
    with_hit = 0
    for chain in chains:
        prompt_total += chain.prompt_tokens
        hit = 0
        for key, n in zip(chain.keys, chain.tokens, strict=True):
            before = seen.get(key, 0)
            hit += min(n, before)
            if before < n:
                break
        if hit:
            with_hit += 1
        hit_total += hit
        for key, n in zip(chain.keys, chain.tokens, strict=True):
            if seen.get(key, 0) < n:
                seen[key] = n
    return PrefixReuse(
        requests=len(chains),
        prompt_tokens=prompt_total,
        hit_tokens=hit_total,
        requests_with_hit=with_hit,
        potential=hit_total / prompt_total if prompt_total else None,
    )

"""What a single-shot workload phase sends: prepared requests, their block chains, a schedule."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from srt_bench.client import Api, PreparedRequest, build_request_body
from srt_bench.workloads.kv import BlockChain

__all__ = ["SingleShot", "build_body"]


class SingleShot(msgspec.Struct, frozen=True, kw_only=True):
    requests: tuple[PreparedRequest, ...]
    #: One per request, in request order (the prefix hit potential's input).
    chains: tuple[BlockChain, ...]
    #: Seconds from the window start at which each request is due; None: sent as the phase's
    #: concurrency and `req_rate` allow.
    offsets: tuple[float, ...] | None = None


def build_body(*, api: Api, model: str, contents: Sequence[str], max_tokens: int | None) -> bytes:
    """A streaming request whose prompt is `contents`: alternating user and assistant messages
    (chat, the last one the user's) or their plain concatenation (completions)."""
    if api == "completions" or len(contents) == 1:
        return build_request_body(
            api=api,
            model=model,
            prompt="".join(contents),
            max_tokens=max_tokens,
            ignore_eos=max_tokens is not None,
        )
    roles = ("user", "assistant")
    messages = [{"role": roles[i % 2], "content": c} for i, c in enumerate(contents)]
    return build_request_body(
        api=api,
        model=model,
        prompt="",
        max_tokens=max_tokens,
        ignore_eos=max_tokens is not None,
        extra={"messages": messages},
    )

"""Multi-turn conversations: the seeded plan of each conversation, and each turn's request.

What a conversation will say (user texts, answer lengths, think times) is fixed before the phase
from the seed; what the server answers is known only at run time, so turn k's request is built
when turn k-1 has finished: the history (every earlier user text and the answer text the client
received), then the new user text. The client's prompt-token count of a turn is the sum of its
messages' tokens; user texts are padded with the tokenizer's separator so that a chat template
that concatenates messages without a delimiter still keeps every message's tokens.
"""

from __future__ import annotations

import math
import random

import msgspec

from srt_bench.client import Api, PreparedRequest
from srt_bench.prompts import draw_lengths
from srt_bench.workloads.config import MultiTurn
from srt_bench.workloads.requests import build_body
from srt_bench.workloads.text import PieceMaker

__all__ = ["Conversation", "History", "build_conversations", "conversation_count"]


class Conversation(msgspec.Struct, frozen=True, kw_only=True):
    user_texts: tuple[str, ...]
    #: Token ids of each user text.
    user_ids: tuple[tuple[int, ...], ...]
    #: `max_tokens` of each turn.
    output_tokens: tuple[int, ...]
    #: Seconds to wait after turn k's answer before turn k+1 (one fewer than turns).
    think_s: tuple[float, ...]


def conversation_count(workload: MultiTurn, concurrency: int, prompts_mult: int) -> int:
    if workload.conversations is not None:
        return workload.conversations
    return max(concurrency, math.ceil(concurrency * prompts_mult / workload.turns))


def build_conversations(
    maker: PieceMaker,
    workload: MultiTurn,
    *,
    count: int,
    isl: int,
    osl: int,
    range_ratio: float,
    seed: int,
) -> list[Conversation]:
    """`count` conversations (deterministic for the seed)."""
    rng = random.Random(f"multi-turn:{seed}")
    t, j = workload.think_time_s, workload.think_time_jitter
    plans: list[tuple[list[str], list[int], tuple[float, ...]]] = []
    for _ in range(count):
        lengths = draw_lengths(rng, isl, range_ratio, workload.turns)
        texts = [maker.pad(maker.draw(rng, n)) for n in lengths]
        outputs = draw_lengths(rng, osl, range_ratio, workload.turns)
        think = tuple(rng.uniform(t * (1 - j), t * (1 + j)) for _ in range(workload.turns - 1))
        plans.append((texts, outputs, think))
    flat = maker.encode([text for texts, _, _ in plans for text in texts])
    out: list[Conversation] = []
    for index, (texts, outputs, think) in enumerate(plans):
        ids = flat[index * workload.turns : (index + 1) * workload.turns]
        out.append(
            Conversation(
                user_texts=tuple(texts),
                user_ids=tuple(tuple(i) for i in ids),
                output_tokens=tuple(outputs),
                think_s=think,
            )
        )
    return out


class History:
    """One conversation in flight: builds the next turn's request, records each answer."""

    def __init__(self, conversation: Conversation, maker: PieceMaker, *, api: Api, model: str):
        self._conv = conversation
        self._maker = maker
        self._api = api
        self._model = model
        self._contents: list[str] = []
        self._ids: list[int] = []

    def request(self, turn: int) -> PreparedRequest:
        """Turn `turn`'s request (every earlier turn's answer must be recorded first)."""
        assert len(self._contents) == 2 * turn
        self._contents.append(self._conv.user_texts[turn])
        self._ids.extend(self._conv.user_ids[turn])
        body = build_body(
            api=self._api,
            model=self._model,
            contents=self._contents,
            max_tokens=self._conv.output_tokens[turn],
        )
        return PreparedRequest(body=body, prompt_tokens=len(self._ids))

    def prompt_ids(self) -> tuple[int, ...]:
        """The token ids of the request built last (history and new user text)."""
        return tuple(self._ids)

    def answer(self, text: str) -> None:
        self._contents.append(text)
        self._ids.extend(self._maker.encode([text])[0] if text else ())

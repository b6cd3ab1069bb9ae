"""A known token schedule: when the fixed-stream server sends each token of a response.

Token 0 is due `ttft` after the server parsed the request, token i+1 an inter-token gap after
token i; each TTFT and each gap is its nominal value times `1 + U(-jitter, jitter)`, drawn from a
generator seeded by the schedule's seed and the request's prompt text. So the truth of every
request is known to whoever knows its prompt: `token_times(schedule, prompt_key(...), n)` gives
the same offsets the server used, and a client's measured TTFT and ITL can be compared with them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec

__all__ = ["TokenSchedule", "prompt_key", "token_times"]


class TokenSchedule(msgspec.Struct, frozen=True, kw_only=True):
    #: Nominal seconds from the request to the first token.
    ttft_s: float
    #: Nominal seconds between two tokens.
    itl_s: float
    #: Each TTFT and gap is scaled by `1 + U(-jitter, jitter)`; 0 <= jitter < 1.
    jitter: float = 0.0
    seed: int = 0


def prompt_key(prompt: str | None, contents: Sequence[str] = ()) -> str:
    """The text a schedule is keyed by: the completions prompt, or the chat messages' contents
    joined (what the server sees; whoever sent the request knows it too)."""
    return (prompt or "") + "".join(contents)


def token_times(schedule: TokenSchedule, key: str, tokens: int) -> tuple[float, ...]:
    """Seconds after the request at which each of its `tokens` tokens is due (pure)."""
    rng = random.Random(f"token-schedule:{schedule.seed}:{key}")
    j = schedule.jitter
    times: list[float] = []
    t = schedule.ttft_s * (1.0 + rng.uniform(-j, j))
    for _ in range(tokens):
        times.append(t)
        t += schedule.itl_s * (1.0 + rng.uniform(-j, j))
    return tuple(times)

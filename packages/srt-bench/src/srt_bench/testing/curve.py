"""A scripted latency curve: TTFT and inter-token gap rise with the load in a known way.

The fixed-stream server (`ServerBehaviour.curve`) gives each request the token schedule of the
number of requests in flight when it arrives, itself included (`n`):

    ttft(n) = ttft_ms + ttft_ms_per_stream * max(0, n - knee)
    itl(n)  = itl_ms  + itl_ms_per_stream  * max(0, n - knee)

so a closed-loop client at concurrency `c` sees, once its streams are all running, `ttft(c)` and
`itl(c)` on every request: the highest concurrency meeting a latency limit is known in advance
(`LatencyCurve.capacity`). That is what a capacity search is tested against.
"""

from __future__ import annotations

import math

import msgspec

from srt_bench.testing.schedule import TokenSchedule

__all__ = ["LatencyCurve"]


class LatencyCurve(msgspec.Struct, frozen=True, kw_only=True):
    #: Milliseconds at up to `knee` streams in flight.
    ttft_ms: float
    itl_ms: float
    #: Milliseconds added per stream in flight beyond `knee`.
    ttft_ms_per_stream: float = 0.0
    itl_ms_per_stream: float = 0.0
    #: Streams served at the base latency.
    knee: int = 0

    def ttft_at(self, in_flight: int) -> float:
        return self.ttft_ms + self.ttft_ms_per_stream * max(0, in_flight - self.knee)

    def itl_at(self, in_flight: int) -> float:
        return self.itl_ms + self.itl_ms_per_stream * max(0, in_flight - self.knee)

    def schedule_at(self, in_flight: int, *, jitter: float = 0.0, seed: int = 0) -> TokenSchedule:
        """The token schedule of a request that arrives with `in_flight` requests running."""
        return TokenSchedule(
            ttft_s=self.ttft_at(in_flight) / 1000.0,
            itl_s=self.itl_at(in_flight) / 1000.0,
            jitter=jitter,
            seed=seed,
        )

    def capacity(
        self, *, ttft_limit_ms: float | None = None, itl_limit_ms: float | None = None
    ) -> int | None:
        """The highest number of streams whose TTFT and gap are within the limits (None: not even
        one stream; a limit the curve never reaches is no bound, reported as a huge number)."""
        best = 10**9
        for base, slope, limit in (
            (self.ttft_ms, self.ttft_ms_per_stream, ttft_limit_ms),
            (self.itl_ms, self.itl_ms_per_stream, itl_limit_ms),
        ):
            if limit is None:
                continue
            if base > limit:
                return None
            if slope > 0:
                best = min(best, self.knee + math.floor((limit - base) / slope + 1e-9))
        return best if best >= 1 else None

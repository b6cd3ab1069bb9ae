"""The ``router`` benchmark's defaults and its prefix-ratio list, read by ``srtctl validate``
(which refuses a list the runner could not run) and by srt-bench's runner alike
(docs/telemetry-and-bench.md#router)."""

from __future__ import annotations

import msgspec

__all__ = ["ROUTER_BENCH", "RouterBenchDefaults", "parse_prefix_ratios"]


class RouterBenchDefaults(msgspec.Struct, frozen=True, kw_only=True):
    """What an unset field means: one aiperf run per prefix ratio, each of ``num_requests``
    requests of ``isl`` prompt tokens (``isl x ratio`` of them a prefix drawn from
    ``num_prefix_prompts`` shared ones) at ``concurrency``, seeds ``initial_seed``, +1, ..."""

    isl: int = 14000
    osl: int = 200
    num_requests: int = 200
    concurrency: int = 20
    prefix_ratios: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9)
    num_prefix_prompts: int = 20
    initial_seed: int = 0


ROUTER_BENCH = RouterBenchDefaults()


def parse_prefix_ratios(value: tuple[float, ...] | str | None) -> tuple[float, ...]:
    """``[0.1, 0.5]`` or ``"0.1 0.5"`` -> ``(0.1, 0.5)``; None -> the defaults. Raises
    ValueError (a message saying what to write instead) for a word that is not a number, a
    ratio outside [0, 1) (1 would leave no prompt of its own) or an empty list."""
    if value is None:
        return ROUTER_BENCH.prefix_ratios
    words: list[object] = list(value.split() if isinstance(value, str) else value)
    if not words:
        raise ValueError("the list is empty; write at least one ratio, e.g. '0.1 0.5 0.9'")
    ratios: list[float] = []
    for word in words:
        try:
            ratio = float(word)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ValueError(
                f"{word!r} is not a number; write ratios as numbers in [0, 1), e.g. '0.1 0.5 0.9'"
            ) from None
        if not 0.0 <= ratio < 1.0:
            raise ValueError(
                f"{ratio:g} is outside [0, 1); a ratio is the share of each prompt that is a "
                "shared prefix, so use a number from 0 up to (not including) 1"
            )
        ratios.append(ratio)
    return tuple(ratios)

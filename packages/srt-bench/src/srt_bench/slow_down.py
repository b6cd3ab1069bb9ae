"""SGLang `/slow_down` around sa-bench's formal phase (Q2: only behind `sglang-router`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping

import httpx

from srt_bench.sa_bench_settings import SlowDown

__all__ = ["SlowDownControl", "slow_down_headers"]

Log = Callable[[str], None]


def slow_down_headers(environ: Mapping[str, str]) -> dict[str, str]:
    """`Authorization: Bearer $OPENAI_API_KEY`, else the raw `$API_KEY`, else none."""
    if environ.get("OPENAI_API_KEY"):
        return {"authorization": f"Bearer {environ['OPENAI_API_KEY']}"}
    if environ.get("API_KEY"):
        return {"authorization": environ["API_KEY"]}
    return {}


class SlowDownControl:
    """POST `/slow_down` before the formal phase; clear after `wait_time` or at its end."""

    def __init__(self, spec: SlowDown, headers: dict[str, str], log: Log) -> None:
        self._spec = spec
        self._headers = headers
        self._log = log
        self._timer: asyncio.Task[None] | None = None
        self._cleared = False

    async def _post(self, value: float | None) -> None:
        async with httpx.AsyncClient(timeout=60.0, trust_env=False) as client:
            for base in self._spec.urls:
                url = base.rstrip("/") + "/slow_down"
                try:
                    resp = await client.post(
                        url, json={"forward_sleep_time": value}, headers=self._headers
                    )
                except httpx.HTTPError as exc:
                    self._log(f"slow_down: POST {url} failed: {exc}")
                    continue
                if resp.status_code >= 400:
                    self._log(f"slow_down: POST {url} answered HTTP {resp.status_code}")

    async def start(self) -> None:
        await self._post(self._spec.sleep_time)
        self._log(
            f"slow_down: forward_sleep_time={self._spec.sleep_time} on "
            f"{len(self._spec.urls)} server(s), clearing after {self._spec.wait_time} s"
        )
        self._timer = asyncio.create_task(self._clear_later())

    async def _clear_later(self) -> None:
        await asyncio.sleep(self._spec.wait_time)
        await self.clear()

    async def clear(self) -> None:
        if self._cleared:
            return
        self._cleared = True
        await self._post(None)

    async def stop(self) -> None:
        if self._timer is not None and not self._timer.done():
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
        await self.clear()

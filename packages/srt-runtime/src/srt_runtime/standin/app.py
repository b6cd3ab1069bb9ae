"""What the stand-in answers on each path: health, info, metrics, profiling (``profiler``),
tokenize, generations.

``Standin.respond`` writes the whole response of one request to the connection. Every role's
generations wait ``ttft_ms`` for the first token and ``itl_ms`` between tokens (due times count
from the request, so a busy loop does not stretch the stream); with ``itl_ms`` 0 the events go
out in writes of up to ``_BATCH``, yielding to the loop between writes, so thousands of streams
interleave. A prefill (``--role prefill``) answers with one token whatever was asked, as a
disaggregated prefill server does; a vLLM prefill asked for ``kv_transfer_params`` answers with
its own (the ``nixl`` port of ``--bind``), which vllm-router hands to the decode.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator

from srt_runtime.standin import info
from srt_runtime.standin.config import StandinConfig
from srt_runtime.standin.httpio import Request, chunk, json_response, sse_head, text_response
from srt_runtime.standin.metrics import LiveStats, render_metrics
from srt_runtime.standin.parse import (
    BadRequestError,
    Generation,
    Kind,
    parse_generation,
    parse_tokenize,
)
from srt_runtime.standin.profiler import Profiler
from srt_runtime.standin.reqlog import RequestLog
from srt_runtime.standin.responses import Answer

__all__ = ["Standin"]

_BATCH = 16
_GENERATIONS: dict[str, Kind] = {
    "/v1/completions": "completion",
    "/v1/chat/completions": "chat",
    "/generate": "generate",
}
_HEALTH = frozenset({"/health", "/health_generate", "/ping"})
#: Accepted and answered 200 with nothing to do.
_CONTROL = frozenset({"/flush_cache", "/abort_request"})
#: The profiler's routes: SGLang's native ones and a Dynamo worker's (``profiler.Profiler``).
_START_PROFILE = frozenset({"/start_profile", "/engine/start_profile"})
_STOP_PROFILE = frozenset({"/stop_profile", "/engine/stop_profile"})


class Standin:
    """The state of one stand-in server: its config, live counts and request log."""

    def __init__(self, config: StandinConfig, *, log: RequestLog | None = None) -> None:
        self.config = config
        self.stats = LiveStats()
        self._log = log
        self._ids = itertools.count(1)
        self._started = int(time.time())
        self.profiler = Profiler(role=config.role, port=config.port)

    def _info(self, path: str) -> object | None:
        match path:
            case "/v1/models":
                return info.build_models(self.config, self._started)
            case "/get_model_info" | "/model_info":
                return info.build_model_info(self.config)
            case "/get_server_info" | "/server_info":
                return info.build_server_info(self.config, self.stats)
            case "/get_load":
                return info.build_load(self.stats)
            case "/version":
                return info.build_version()
        return None

    async def respond(self, req: Request, writer: asyncio.StreamWriter) -> None:
        if self._log is not None:
            self._log.write(req.method, req.path, req.query, req.body)
        path, keep = req.path, req.keep_alive
        if path in _GENERATIONS:
            if req.method != "POST":
                writer.write(json_response(405, {"detail": "Method Not Allowed"}, keep_alive=keep))
                return
            await self._generate(_GENERATIONS[path], req, writer)
            return
        if path in _START_PROFILE or path in _STOP_PROFILE:
            answer = (
                self.profiler.start(req.body) if path in _START_PROFILE else self.profiler.stop()
            )
            writer.write(json_response(answer.status, answer.body, keep_alive=keep))
            return
        if path in _HEALTH or path in _CONTROL:
            writer.write(text_response(200, "", content_type="text/plain", keep_alive=keep))
            return
        if path == "/metrics":
            text = render_metrics(self.config.engine, self.config.served_model_name, self.stats)
            ctype = "text/plain; version=0.0.4; charset=utf-8"
            writer.write(text_response(200, text, content_type=ctype, keep_alive=keep))
            return
        if path == "/tokenize" and req.method == "POST":
            try:
                tokens = parse_tokenize(req.body)
            except BadRequestError as exc:
                error = {"message": str(exc), "type": "BadRequestError", "code": 400}
                writer.write(json_response(400, {"error": error}, keep_alive=keep))
                return
            writer.write(json_response(200, info.build_tokenized(tokens), keep_alive=keep))
            return
        body = self._info(path)
        if body is None:
            writer.write(json_response(404, {"detail": "Not Found"}, keep_alive=keep))
            return
        writer.write(json_response(200, body, keep_alive=keep))

    def _kv_params(self, gen: Generation, writer: asyncio.StreamWriter) -> dict[str, object] | None:
        """A vLLM PD prefill's ``kv_transfer_params``: where the decode would read the KV."""
        if self.config.role != "prefill" or gen.kv_transfer_params is None:
            return None
        sock = writer.get_extra_info("sockname")
        host = sock[0] if isinstance(sock, tuple) else "127.0.0.1"
        binds = dict(self.config.binds)
        return {
            "do_remote_prefill": True,
            "do_remote_decode": False,
            "remote_block_ids": [0],
            "remote_engine_id": f"standin-{self.config.port}",
            "remote_host": host,
            "remote_port": binds.get("nixl", 0),
            "tp_size": 1,
        }

    def _model_error(self, gen: Generation) -> str | None:
        # vLLM answers 404 for a model it does not serve; SGLang and the others ignore it.
        name = self.config.served_model_name
        if self.config.engine == "vllm" and gen.model is not None and gen.model != name:
            return f"The model `{gen.model}` does not exist."
        return None

    async def _generate(self, kind: Kind, req: Request, writer: asyncio.StreamWriter) -> None:
        keep = req.keep_alive
        try:
            default = self.config.max_tokens_default
            gen = parse_generation(kind, req.body, default_max_tokens=default)
        except BadRequestError as exc:
            error = {"message": str(exc), "type": "BadRequestError", "code": 400}
            writer.write(json_response(400, {"error": error}, keep_alive=keep))
            return
        missing = self._model_error(gen)
        if missing is not None:
            error = {"message": missing, "type": "NotFoundError", "code": 404}
            writer.write(json_response(404, {"error": error}, keep_alive=keep))
            return
        tokens = 1 if self.config.role == "prefill" else gen.max_tokens
        prefix = "chatcmpl" if kind == "chat" else "cmpl"
        answer = Answer(
            gen,
            tokens=tokens,
            request_id=f"{prefix}-standin-{self.config.port}-{next(self._ids)}",
            created=int(time.time()),
            model=gen.model or self.config.served_model_name,
            kv_transfer_params=self._kv_params(gen, writer),
        )
        stats = self.stats
        stats.started(gen.prompt_tokens)
        sent = 0
        try:
            if gen.stream:
                async for n in self._stream(answer, writer, keep):
                    sent += n
                    stats.emitted(n)
            else:
                await self._sleep_until(self._due(tokens - 1))
                writer.write(json_response(200, answer.whole(), keep_alive=keep))
                sent = tokens
                stats.emitted(tokens)
        finally:
            stats.finished(gen.prompt_tokens + sent, completed=sent == tokens)
            self.profiler.step()

    def _due(self, i: int, start: float | None = None) -> float:
        """Loop time when token ``i`` is due (``i`` < 0: now)."""
        loop = asyncio.get_running_loop()
        begin = loop.time() if start is None else start
        if i < 0:
            return begin
        return begin + (self.config.ttft_ms + i * self.config.itl_ms) / 1000.0

    @staticmethod
    async def _sleep_until(due: float) -> None:
        delay = due - asyncio.get_running_loop().time()
        if delay > 0:
            await asyncio.sleep(delay)

    async def _stream(
        self, answer: Answer, writer: asyncio.StreamWriter, keep: bool
    ) -> AsyncIterator[int]:
        """Write the stream; yields how many tokens each write carried."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        writer.write(sse_head(keep_alive=keep))
        paced = self.config.itl_ms > 0
        batch: list[bytes] = []
        for i in range(answer.tokens):
            due = self._due(i, start)
            if batch and (paced or len(batch) >= _BATCH or due > loop.time()):
                yield await self._flush(writer, batch)
            await self._sleep_until(due)
            batch.append(answer.token_event(i))
        if batch:
            yield await self._flush(writer, batch)
        if writer.is_closing():
            raise ConnectionResetError("client went away")
        writer.write(chunk(answer.tail_events()) + chunk(b""))

    @staticmethod
    async def _flush(writer: asyncio.StreamWriter, batch: list[bytes]) -> int:
        if writer.is_closing():
            raise ConnectionResetError("client went away")
        n = len(batch)
        writer.write(chunk(b"".join(batch)))
        batch.clear()
        await writer.drain()
        await asyncio.sleep(0)
        return n

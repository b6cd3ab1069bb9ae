"""The stand-in's listeners: HTTP on ``--port`` and on the ``--bind`` ports an engine serves
HTTP on too (``HTTP_BINDS``: its own HTTP port when the public port is the main one, the Dynamo
system port readiness probes ask for ``/health``), accept-and-close on every other ``--bind``
port, until SIGTERM or SIGINT (then every listener and connection closes and ``serve`` returns)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import TextIO

from srt_runtime.standin.app import Standin
from srt_runtime.standin.config import StandinConfig
from srt_runtime.standin.httpio import HttpError, json_response, read_request
from srt_runtime.standin.reqlog import RequestLog

__all__ = ["HTTP_BINDS", "ListenError", "build_startup_line", "serve"]

#: ``--bind`` names served with the same HTTP app as ``--port``.
HTTP_BINDS = frozenset({"http", "sys"})

_BACKLOG = 4096
_HEAD_LIMIT = 64 * 1024
#: How long a stop waits for cancelled connections to finish before returning.
_STOP_GRACE = 0.3


def build_startup_line(config: StandinConfig, port: int, binds: dict[str, int]) -> str:
    """``stand-in for sglang prefill 'Qwen/Qwen3-0.6B' on :6100 (also bootstrap :7200)``."""
    line = f"stand-in for {config.engine} {config.role} {config.served_model_name!r} on :{port}"
    if binds:
        line += " (also " + ", ".join(f"{name} :{p}" for name, p in binds.items()) + ")"
    return line


class _Connections:
    """The HTTP connections being served, so a stop can close them."""

    def __init__(self, app: Standin) -> None:
        self._app = app
        self._tasks: set[asyncio.Task[None]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._requests(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away, mid-request or mid-stream
        except asyncio.CancelledError:
            # A stop: end quietly (asyncio's stream callback reports a cancelled connection
            # task as an error in Python 3.11).
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _requests(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                req = await read_request(reader, writer)
            except HttpError as exc:
                body = {"error": {"message": str(exc), "code": exc.status}}
                writer.write(json_response(exc.status, body, keep_alive=False))
                return
            if req is None:
                return
            try:
                await self._app.respond(req, writer)
            except (ConnectionError, asyncio.CancelledError):
                raise
            except Exception:  # a bug here must not look like a healthy engine: answer 500
                traceback.print_exc()
                writer.write(json_response(500, {"error": {"message": "stand-in error"}}))
                return
            await writer.drain()
            if not req.keep_alive:
                return

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=_STOP_GRACE)


class ListenError(OSError):
    """A port the stand-in must listen on is taken (or not allowed)."""


async def _listen(
    callback: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
    config: StandinConfig,
    name: str,
    port: int,
) -> asyncio.Server:
    try:
        return await asyncio.start_server(
            callback, config.host, port, backlog=_BACKLOG, limit=_HEAD_LIMIT
        )
    except OSError as exc:
        # asyncio's own message repeats the address; the C library's names the cause.
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise ListenError(
            exc.errno, f"cannot listen on {config.host}:{port} ({name}): {reason}"
        ) from exc


async def _refuse(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.close()


async def serve(
    config: StandinConfig, *, stop: asyncio.Event | None = None, out: TextIO = sys.stderr
) -> None:
    """Serve until ``stop`` is set (by default: until SIGTERM or SIGINT)."""
    loop = asyncio.get_running_loop()
    if stop is None:
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
    log = RequestLog(config.log_requests) if config.log_requests is not None else None
    connections = _Connections(Standin(config, log=log))
    servers: list[asyncio.Server] = []
    try:
        main = await _listen(connections.serve, config, "http", config.port)
        servers.append(main)
        binds: dict[str, int] = {}
        for name, port in config.binds:
            callback = connections.serve if name in HTTP_BINDS else _refuse
            servers.append(await _listen(callback, config, name, port))
            binds[name] = port
        port = main.sockets[0].getsockname()[1]
        print(build_startup_line(config, port, binds), file=out, flush=True)
        await stop.wait()
    finally:
        for server in servers:
            server.close()
        await connections.close()
        if log is not None:
            log.close()

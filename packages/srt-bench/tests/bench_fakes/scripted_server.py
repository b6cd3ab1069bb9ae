"""A TCP server on 127.0.0.1 that answers each request with scripted raw bytes.

Each response is a list of byte pieces written with a short pause in between (to split reads),
optionally followed by closing the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec


class Reply(msgspec.Struct, frozen=True):
    pieces: tuple[bytes, ...]
    close: bool = False
    delay: float = 0.0


@asynccontextmanager
async def scripted_server(replies: list[Reply]) -> AsyncIterator[tuple[str, list[bytes]]]:
    """Yields (base_url, received_request_heads); replies are used in order across connections."""
    queue = list(replies)
    heads: list[bytes] = []

    tasks: set[asyncio.Task[None]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            await serve(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while queue:
                head = await reader.readuntil(b"\r\n\r\n")
                heads.append(head)
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                reply = queue.pop(0)
                for piece in reply.pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(reply.delay)
                if reply.close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}", heads
        # stop handlers still sleeping mid-reply, so every socket is closed before the loop ends
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

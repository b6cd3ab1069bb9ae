"""A non-streaming chat-completions server on 127.0.0.1 answering from a lookup table.

The reply is the value of the first key found in the last user message, else "I don't know".
Every received prompt is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def chat_server(
    answers: dict[str, str], bodies: list[dict[str, object]] | None = None
) -> Iterator[tuple[str, list[str]]]:
    prompts: list[str] = []
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    state: dict[str, object] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = json.loads(await reader.readexactly(length))
                prompt = body["messages"][-1]["content"]
                if bodies is not None:  # the whole request, for tests of sampling fields
                    bodies.append(body)
                prompts.append(prompt)
                reply = next((v for k, v in answers.items() if k in prompt), "I don't know")
                data = json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": reply}}]}
                ).encode()
                head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                writer.write(head + b"content-length: %d\r\n\r\n%s" % (len(data), data))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def start() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        state["server"] = server
        state["port"] = server.sockets[0].getsockname()[1]
        ready.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    try:
        yield f"http://127.0.0.1:{state['port']}", prompts
    finally:

        async def stop() -> None:
            server = state["server"]
            assert isinstance(server, asyncio.Server)
            server.close()
            await server.wait_closed()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()

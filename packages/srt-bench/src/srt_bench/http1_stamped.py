"""A plain-TCP connection that stamps each arrival with the kernel's receive time (Linux).

Why: at 1,024 streams on 2 cores the client's event loop is often busy when a token arrives, so
a stamp taken when the loop reads the socket adds the loop's backlog to the token's latency.
With `SO_TIMESTAMPNS` set, the kernel records when each segment reached the socket and
`recvmsg` returns it (`SCM_TIMESTAMPNS`, wall-clock nanoseconds). The stamp handed to the parser
is `perf_counter()` at the read minus how long the data waited (`time.time()` minus the kernel's
time), so every time the client keeps stays on one clock.

What it cannot fix: TCP returns only the newest segment's time with a read, so tokens that queued
up together while the loop was stalled share the last one's stamp; and a stall before the
request is written delays the request itself (the server's clock starts later).
"""

from __future__ import annotations

import asyncio
import socket
import struct
import sys
import time

from srt_bench.http1_conn import Connection, HttpError

__all__ = ["KERNEL_STAMPS", "StampedConnection", "connect_stamped", "kernel_delay"]

#: The socket option (and control message type) of nanosecond receive times on Linux.
SO_TIMESTAMPNS: int = getattr(socket, "SO_TIMESTAMPNS", 35)
#: Kernel receive times work here (Linux's socket API; elsewhere the loop's read time is used).
KERNEL_STAMPS = sys.platform.startswith("linux")

_READ_SIZE = 256 * 1024
_TIMESPEC = struct.Struct("@qq")
_ANC_SIZE = socket.CMSG_SPACE(_TIMESPEC.size)


def kernel_delay(ancillary: list[tuple[int, int, bytes]], wall_now: float) -> float:
    """Seconds the bytes of one `recvmsg` waited in the kernel (0.0 without a timestamp)."""
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
            sec, nsec = _TIMESPEC.unpack_from(payload)
            return max(0.0, wall_now - (float(sec) + float(nsec) * 1e-9))
    return 0.0


class StampedConnection(Connection):
    """One non-blocking socket the event loop watches; reads stamp with kernel receive times."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
        super().__init__()
        self._loop = loop
        self._sock = sock
        self._fd = sock.fileno()
        self._pending = bytearray()
        self._open = True
        loop.add_reader(self._fd, self._read_ready)

    def _read_ready(self) -> None:
        try:
            data, ancillary, _flags, _address = self._sock.recvmsg(_READ_SIZE, _ANC_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._teardown(exc)
            return
        now, wall = time.perf_counter(), time.time()
        if not data:
            self._teardown(None)
            return
        self.feed(data, now - kernel_delay(ancillary, wall))

    def _write(self, data: bytes) -> None:
        if self._pending:
            self._pending += data
            return
        try:
            sent = self._sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            self._teardown(exc)
            return
        if sent < len(data):
            self._pending += data[sent:]
            self._loop.add_writer(self._fd, self._write_ready)

    def _write_ready(self) -> None:
        try:
            sent = self._sock.send(self._pending)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._teardown(exc)
            return
        del self._pending[:sent]
        if not self._pending:
            self._loop.remove_writer(self._fd)

    def _teardown(self, exc: Exception | None) -> None:
        if self._open:
            self._open = False
            self._loop.remove_reader(self._fd)
            if self._pending:
                self._loop.remove_writer(self._fd)
                self._pending.clear()
            self._sock.close()
        if not self.closed:
            self.lost(exc)

    def abort(self) -> None:
        self._teardown(None)

    def close(self) -> None:
        self._teardown(None)


def _numeric(host: str, port: int) -> list[tuple[int, int, int, str, tuple[str, int]]] | None:
    """The address of a numeric host without a resolver round trip (which runs in a thread and
    would add milliseconds to every new connection's first-token time)."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except OSError:
            continue
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port))]
    return None


async def connect_stamped(host: str, port: int) -> StampedConnection:
    """A connection to `host:port` with kernel receive times on; raises `HttpError`."""
    loop = asyncio.get_running_loop()
    infos: list[tuple[int, int, int, str, tuple[str, int]]] | None = _numeric(host, port)
    if infos is None:
        try:
            resolved = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise HttpError(f"cannot connect to {host}:{port}: {exc}") from exc
        infos = [(f, k, p, n, (str(a[0]), int(a[1]))) for f, k, p, n, a in resolved]
    error: OSError | None = None
    for family, kind, proto, _name, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            await loop.sock_connect(sock, address)
        except OSError as exc:
            sock.close()
            error = exc
            continue
        except BaseException:
            sock.close()
            raise
        return StampedConnection(loop, sock)
    raise HttpError(f"cannot connect to {host}:{port}: {error or 'no address'}")

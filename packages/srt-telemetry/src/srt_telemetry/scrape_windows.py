"""Window sampling for the scraper: enough scrapes inside every benchmark measurement window.

The benchmark stamps each measured phase in the window folder (`<stem>.json`, status `running`,
then `completed`/`failed`/`interrupted`; docs/telemetry-and-bench.md#power-windows). A
`WindowWatch` polls that folder; while a window runs, each endpoint's next scrape comes sooner
than its `collect_interval_ms` (`next_scrape_at`), and a window opening or closing triggers a
scrape at once. With `window_samples` N and the floor F (`window_min_interval_ms`), the step
inside a window is `min(interval, max(F, elapsed / N))`: N + 1 scrapes by the time the window is
N x F old, then about N x ln(2) more each time it doubles, and never fewer than the fixed
interval would take. So every window at least N x F long (100 ms at the defaults) gets N scrapes
of each endpoint, as long as a scrape takes less than the step (the per-window counts are on the
dashboard, which says when a window got fewer).

`next_scrape_at` and `WindowState.update` are pure; `WindowWatch` reads the folder.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from srt_telemetry.power_windows import decode_window

__all__ = ["WindowState", "WindowWatch", "next_scrape_at", "read_window_statuses"]


def next_scrape_at(
    last: float,
    *,
    origin: float,
    interval: float,
    window_since: float | None,
    samples: int,
    floor: float,
) -> float:
    """When the scrape after the one started at `last` is due (seconds, one clock).

    Outside a window (`window_since` None, or `samples` 0): the next slot of the fixed grid
    `origin + k x interval` after `last`. Inside a window opened at `window_since`:
    `last + min(interval, max(floor, (last - window_since) / samples))`.
    """
    if window_since is None or samples <= 0:
        k = int((last - origin) / interval) + 1
        return origin + k * interval
    elapsed = max(0.0, last - window_since)
    return last + min(interval, max(floor, elapsed / samples))


@dataclass
class WindowState:
    """Which windows run, as far as the folder says, and since when (the watcher's clock)."""

    #: window file name -> its status at the last look
    statuses: dict[str, str] = field(default_factory=dict)
    #: when the running set last went from empty to not empty; None: no window runs
    since: float | None = None
    #: bumped on every open or close, so each endpoint loop scrapes once at the boundary
    generation: int = 0

    def update(self, statuses: Mapping[str, str], now: float) -> bool:
        """Take the folder's statuses; True when the set of running windows changed (a window
        opened, closed, or one ended as the next began: the window clock restarts)."""
        before = {n for n, s in self.statuses.items() if s == "running"}
        after = {n for n, s in statuses.items() if s == "running"}
        self.statuses = dict(statuses)
        if before == after:
            return False
        self.since = now if after else None
        self.generation += 1
        return True


FileKey = tuple[int, int, int]  # inode, size, mtime_ns: a rename or rewrite changes it


def read_window_statuses(
    folder: Path, seen: dict[str, tuple[FileKey, str | None]]
) -> dict[str, str]:
    """`<stem>.json` -> status of every window file that decodes (hidden temp files skipped; a
    file half-seen or malformed is left out until it decodes). `seen` caches each file's key and
    status so that only a new or replaced file is read (the bench replaces a window by rename,
    which changes the inode whatever the file system's mtime resolution)."""
    out: dict[str, str] = {}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return out
    for entry in entries:
        if entry.name.startswith(".") or not entry.name.endswith(".json"):
            continue
        try:
            st = entry.stat()
        except OSError:
            continue
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        cached = seen.get(entry.name)
        if cached is None or cached[0] != key:
            try:
                window = decode_window(json.loads(Path(entry.path).read_bytes()))
            except (OSError, ValueError):
                window = None
            cached = (key, None if window is None else window.status)
            seen[entry.name] = cached
        if cached[1] is not None:
            out[entry.name] = cached[1]
    return out


class WindowWatch(threading.Thread):
    """Polls the window folder every `poll` seconds; on an open or close it calls `on_change`
    (the scraper wakes its endpoint loops)."""

    def __init__(
        self,
        folder: Path,
        *,
        stop: threading.Event,
        on_change: Callable[[], None],
        poll: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(name="scrape-windows", daemon=True)
        self.folder, self.stop, self.on_change, self.poll = folder, stop, on_change, poll
        self.clock = clock
        self.lock = threading.Lock()
        self.state = WindowState()
        self._seen: dict[str, tuple[FileKey, str | None]] = {}

    def snapshot(self) -> tuple[int, float | None]:
        with self.lock:
            return self.state.generation, self.state.since

    def look(self) -> bool:
        """One look at the folder; True when a window opened or closed."""
        statuses = read_window_statuses(self.folder, self._seen)
        with self.lock:
            return self.state.update(statuses, self.clock())

    def run(self) -> None:
        while not self.stop.is_set():
            if self.look():
                self.on_change()
            self.stop.wait(self.poll)
        self.on_change()  # wake the loops so they see the stop

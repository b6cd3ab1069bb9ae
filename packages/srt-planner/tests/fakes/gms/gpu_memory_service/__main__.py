"""Fake GPU Memory Service server: binds its two sockets as files, then serves until signalled.

``python -m gpu_memory_service --device N`` creates ``gms_<N>_weights.sock`` and
``gms_<N>_kv_cache.sock`` in ``$GMS_SOCKET_DIR``; ``FAKE_GMS_EXIT_DEVICE=N`` makes device N
exit with status 7 right after binding (a crashing server).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=int, required=True)
    device = parser.parse_args().device
    directory = Path(os.environ["GMS_SOCKET_DIR"])
    for tag in ("weights", "kv_cache"):
        (directory / f"gms_{device}_{tag}.sock").touch()
    if os.environ.get("FAKE_GMS_EXIT_DEVICE") == str(device):
        time.sleep(0.5)
        return 7
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())

"""`python -m srt_bench.testing --port 18080 --tokens 64`: run the fixed-stream server."""

from __future__ import annotations

from srt_bench.testing.fixed_server import main

if __name__ == "__main__":
    main()

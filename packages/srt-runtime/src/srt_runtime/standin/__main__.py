"""``python -m srt_runtime.standin --port P --served-model-name M --engine E [--role R] ...``."""

from __future__ import annotations

import sys

from srt_runtime.standin import main

sys.exit(main())

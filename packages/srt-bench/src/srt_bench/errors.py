"""The one exception family of srt-bench; only the CLI maps these to exit codes and prints."""

from __future__ import annotations

__all__ = [
    "BenchConfigError",
    "BenchDatasetError",
    "BenchError",
    "BenchGateError",
    "BenchHubError",
    "BenchPowerFileError",
    "BenchRequestError",
    "BenchRollupFileError",
    "BenchTokenizerError",
    "BenchValidityFileError",
    "BenchWindowDirError",
]


class BenchError(Exception):
    """Base of every error srt-bench raises on purpose."""

    exit_code: int = 1


class BenchConfigError(BenchError):
    """The run configuration (bench.json) is unusable: bad value, missing field, unknown type."""

    exit_code = 2


class BenchDatasetError(BenchError):
    """A dataset or tokenizer file is missing or malformed."""


class BenchHubError(BenchError):
    """A Hugging Face hub model could not be fetched (gated, missing, unreachable, not cached
    offline); the message is the whole diagnosis."""


class BenchTokenizerError(BenchError):
    """``benchmark.custom_tokenizer`` names a class that cannot be imported or loaded."""


class BenchRequestError(BenchError):
    """A request that had to succeed (the sanity or test prompt) failed."""


class BenchGateError(BenchError):
    """A phase failed the request-failure gate (too many failures or zero output tokens)."""


class BenchPowerFileError(BenchError):
    """A power telemetry file `srt-bench energy` reads (or the rollup it rewrites) is malformed."""


class BenchWindowDirError(BenchError):
    """The measurement-window folder cannot be created (permission, a file in the way)."""

    exit_code = 2


class BenchRollupFileError(BenchError):
    """The rollup `srt-bench profiles` adds to is malformed."""


class BenchValidityFileError(BenchError):
    """A file `srt-bench validity` judges from (the rollup, a result JSON, the health gate's or
    the restarts' record, the power manifest) is malformed."""

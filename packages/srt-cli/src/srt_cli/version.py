"""``srtctl --version``: package version, recipe schema versions, lockfile version."""

from __future__ import annotations

__all__ = ["LOCKFILE_VERSION", "RECIPE_SCHEMA_VERSIONS", "package_version", "version_line"]

#: Recipe schema versions this build loads (``srtctl migrate`` reads schema 1 as well).
RECIPE_SCHEMA_VERSIONS = (2,)
LOCKFILE_VERSION = 2


def package_version() -> str:
    from importlib import metadata  # only when asked: importlib.metadata is slow to import

    try:
        return metadata.version("srt-cli")
    except metadata.PackageNotFoundError:
        return "0.0.0+unknown"


def version_line() -> str:
    schemas = ", ".join(str(v) for v in RECIPE_SCHEMA_VERSIONS)
    return f"srtctl {package_version()}; recipe schema {schemas}; lockfile v{LOCKFILE_VERSION}"

"""The one base struct every config struct derives from."""

from __future__ import annotations

import msgspec

__all__ = ["Base"]


class Base(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Frozen, keyword-only, and strict: an unknown key is an error, never silently dropped."""

"""The team's JSON Schemas, shipped as package data (``recipe``, ``cluster``)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

__all__ = ["load_schema", "schema_text"]


def schema_text(name: Literal["recipe", "cluster"]) -> str:
    """The schema's JSON text, exactly as committed."""
    return (Path(__file__).parent / f"{name}.schema.json").read_text()


@cache
def load_schema(name: Literal["recipe", "cluster"]) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(schema_text(name))
    return value

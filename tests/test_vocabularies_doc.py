"""docs/vocabularies.md is the rendering of the one table per vocabulary (services, frontends,
benchmark types, engine capabilities); regenerate it with ``--update-golden``."""

from __future__ import annotations

from pathlib import Path

import pytest

from srt_schema.registry import FRONTENDS, SERVICE_KINDS
from srt_schema.vocabulary_docs import render_vocabularies

_DOC = Path(__file__).resolve().parents[1] / "docs" / "vocabularies.md"


def test_docs_vocabularies_is_the_rendering_of_the_tables(request: pytest.FixtureRequest) -> None:
    rendered = render_vocabularies()
    if request.config.getoption("--update-golden"):
        _DOC.write_text(rendered, encoding="utf-8")
    assert _DOC.read_text(encoding="utf-8") == rendered, (
        "docs/vocabularies.md is stale; run "
        "`uv run --frozen pytest tests/test_vocabularies_doc.py --update-golden`"
    )


def test_the_doc_names_every_service_kind_and_frontend() -> None:
    text = _DOC.read_text(encoding="utf-8")
    for name in (*SERVICE_KINDS, *FRONTENDS):
        assert f"| `{name}`" in text

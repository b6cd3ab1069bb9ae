"""``srt_schema``'s public names load on first use: a submodule import stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import srt_schema


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(','.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    return set(out.split(","))


def test_every_public_name_resolves_to_its_defining_module() -> None:
    public = [name for name in srt_schema.__all__ if name != "__version__"]
    assert sorted(public) == sorted(srt_schema._EXPORTS)
    for name in public:
        value = getattr(srt_schema, name)
        assert value.__module__ == srt_schema._EXPORTS[name], name


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'srt_schema' has no attribute 'nope'"):
        srt_schema.nope  # noqa: B018


def test_importing_errors_recipe_or_secrets_loads_no_yaml() -> None:
    loaded = _loaded_after("import srt_schema.errors, srt_schema.recipe, srt_schema.secrets")
    assert "yaml" not in loaded
    assert "srt_schema.load" not in loaded
    assert "srt_schema.clusterconfig" not in loaded


def test_a_public_name_loads_its_module_on_first_use() -> None:
    loaded = _loaded_after("from srt_schema import load_recipe_text")
    assert {"srt_schema.load", "yaml"} <= loaded

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from srt_planner._yaml import dump_yaml

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.text(min_size=1, max_size=8), _values, max_size=5))
def test_dump_yaml_round_trips(value: dict[str, Any]) -> None:
    assert yaml.safe_load(dump_yaml(value)) == value


def test_block_style_sorted() -> None:
    assert dump_yaml({"b": [1, {"x": True}], "a": "yes"}) == 'a: "yes"\nb:\n  - 1\n  - x: true\n'

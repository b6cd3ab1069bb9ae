from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from srt_planner.errors import HostlistError
from srt_planner.hostlist import compress_hostlist, expand_hostlist


def test_expand_ranges_and_lists() -> None:
    assert expand_hostlist("node-[01-03,07],gpu9") == (
        "node-01",
        "node-02",
        "node-03",
        "node-07",
        "gpu9",
    )


def test_expand_keeps_width() -> None:
    assert expand_hostlist("n[098-101]") == ("n098", "n099", "n100", "n101")


def test_compress_collapses_runs() -> None:
    names = ("node-01", "node-02", "node-03", "node-07", "login")
    assert compress_hostlist(names) == "node-[01-03],node-07,login"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "hostlist is empty; expected e.g. 'node-[01-04]'"),
        ("node-[01-03", "hostlist 'node-[01-03': unbalanced '['"),
        ("node-[05-01]", "hostlist 'node-[05-01]': bad range '05-01'; write e.g. [01-08]"),
    ],
)
def test_bad_hostlists(text: str, message: str) -> None:
    with pytest.raises(HostlistError) as info:
        expand_hostlist(text)
    assert str(info.value) == message


_names = st.lists(
    st.builds(
        lambda prefix, number, width: f"{prefix}{str(number).zfill(width)}",
        st.sampled_from(["node-", "gpu", "a1b-"]),
        st.integers(min_value=0, max_value=300),
        st.integers(min_value=1, max_value=4),
    ),
    min_size=1,
    max_size=40,
)


@given(_names)
def test_round_trip(names: list[str]) -> None:
    assert expand_hostlist(compress_hostlist(names)) == tuple(names)

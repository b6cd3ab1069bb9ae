"""One helper per timestamp format (srt_schema.timestamps), exact strings."""

from __future__ import annotations

import datetime as dt

from srt_schema.timestamps import iso_micros_z, iso_millis_offset, iso_millis_z, iso_seconds_z

MOMENT = 1_764_428_529.25  # 2025-11-29T15:02:09.250 UTC


def test_each_format_from_epoch_seconds() -> None:
    assert iso_seconds_z(MOMENT) == "2025-11-29T15:02:09Z"
    assert iso_millis_offset(MOMENT) == "2025-11-29T15:02:09.250+00:00"
    assert iso_millis_z(MOMENT) == "2025-11-29T15:02:09.250Z"
    assert iso_micros_z(MOMENT) == "2025-11-29T15:02:09.250000Z"


def test_a_datetime_in_another_zone_is_written_in_utc() -> None:
    moment = dt.datetime(2025, 11, 29, 16, 2, 9, 250_000, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert iso_seconds_z(moment) == "2025-11-29T15:02:09Z"
    assert iso_micros_z(moment) == "2025-11-29T15:02:09.250000Z"
    assert dt.datetime.fromisoformat(iso_millis_offset(moment)) == moment

"""Test doubles of srt-bench's tests (named so they never shadow another package's `fakes`)."""

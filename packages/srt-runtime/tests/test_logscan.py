"""LogScanner: new bytes only, whole lines, truncation, invalid UTF-8, missing files."""

from __future__ import annotations

from pathlib import Path

from srt_runtime.logscan import LogScanner, LogTailer


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def test_a_missing_file_is_ignored_until_it_appears(tmp_path: Path) -> None:
    log = tmp_path / "w.out"
    scanner = LogScanner(log, ("FATAL",))
    assert scanner.scan() == []
    _append(log, b"FATAL one\n")
    assert scanner.scan() == ["FATAL one"]


def test_only_new_complete_lines_are_matched(tmp_path: Path) -> None:
    log = tmp_path / "w.out"
    log.write_bytes(b"FATAL old\n")
    scanner = LogScanner(log, ("FATAL",))
    assert scanner.scan() == ["FATAL old"]
    _append(log, b"ok\nFAT")
    assert scanner.scan() == []
    _append(log, b"AL split\r\nFATAL second\n")
    assert scanner.scan() == ["FATAL split", "FATAL second"]
    assert scanner.scan() == []


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    log = tmp_path / "w.out"
    log.write_bytes(b"\xff\xfeCUDA error \xc3\n")
    assert LogScanner(log, (r"CUDA error",)).scan() == ["\ufffd\ufffdCUDA error \ufffd"]


def test_a_truncated_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    log = tmp_path / "w.out"
    log.write_bytes(b"line one\nline two\n")
    scanner = LogScanner(log, ("boom",))
    assert scanner.scan() == []
    log.write_bytes(b"boom\n")
    assert scanner.scan() == ["boom"]


def test_several_patterns_and_many_lines(tmp_path: Path) -> None:
    log = tmp_path / "w.out"
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(100_000)) + b"NCCL WARN x\n")
    scanner = LogScanner(log, ("CUDA error", "NCCL WARN"))
    found: list[str] = []
    for _ in range(5):  # bounded reads: a big backlog takes a few calls
        found += scanner.scan()
    assert found == ["NCCL WARN x"]


def test_an_endless_line_is_scanned_in_bounded_pieces(tmp_path: Path) -> None:
    log = tmp_path / "w.out"
    log.write_bytes(b"FATAL" + b"x" * (2 * 1024 * 1024))  # no newline, ever
    scanner = LogScanner(log, ("FATAL",))
    found: list[str] = []
    for _ in range(4):
        found += scanner.scan()
    # Flushed as a line once more than 1 MiB waited for a newline (two 1 MiB reads).
    assert [(line[:5], len(line)) for line in found] == [("FATAL", 2 * 1024 * 1024)]


def test_the_tailer_reports_matches_per_key(tmp_path: Path) -> None:
    log = tmp_path / "w.out"
    seen: list[tuple[str, str]] = []
    tailer = LogTailer(lambda key, line: seen.append((key, line)))
    tailer.watch("w", LogScanner(log, ("FATAL",)))
    _append(log, b"FATAL a\n")
    tailer.scan_once()
    tailer.unwatch("w")
    _append(log, b"FATAL b\n")
    tailer.scan_once()
    assert seen == [("w", "FATAL a")]

"""The benchmark step's downloads (srt_bench.fetch) against a real HTTP server on 127.0.0.1:
into the shared cache once, reused after, and every failure a one-screen diagnosis naming the
URL, what happened and what to do."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from pathlib import Path

import msgspec
import pytest

from srt_bench.config import BenchRunConfig
from srt_bench.errors import BenchDatasetError
from srt_bench.fetch import fetch_datasets, fetch_one
from srt_bench.testing import StaticFileServer
from srt_schema.fetch import DatasetFetch, FetchRecord
from srt_schema.recipe import BenchmarkConfig

TRACE = b"".join(
    json.dumps({"timestamp": i, "input_length": 8, "output_length": 2, "hash_ids": [i]}).encode()
    + b"\n"
    for i in range(4)
)
SHA = hashlib.sha256(TRACE).hexdigest()


def _spec(url: str, cache: Path, sha256: str | None = None) -> DatasetFetch:
    return DatasetFetch(
        field="dataset_path",
        what="the mooncake-router trace",
        url=url,
        cache_file=str(cache / "srt-downloads" / "k" / "conversation_trace.jsonl"),
        sha256=sha256,
        source="$SRT_MOONCAKE_TRACE_URL",
    )


@pytest.fixture
def server(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = tmp_path / "www"
    root.mkdir()
    (root / "conversation_trace.jsonl").write_bytes(TRACE)
    with StaticFileServer(root) as s:
        yield s


def test_a_download_lands_in_the_cache_with_its_sha256_and_is_reused(
    tmp_path: Path, server: StaticFileServer
) -> None:
    lines: list[str] = []
    spec = _spec(f"{server.url}/conversation_trace.jsonl", tmp_path / "cache")
    got = fetch_one(spec, lines.append)
    assert (got.origin, got.sha256, got.size_bytes) == ("downloaded", SHA, len(TRACE))
    assert Path(got.path).read_bytes() == TRACE
    assert Path(got.path + ".sha256").read_text() == SHA + "\n"
    assert got.pinned_url == f"{spec.url}#sha256={SHA}"
    # no temporary file is left beside it
    assert sorted(p.name for p in Path(got.path).parent.iterdir()) == [
        "conversation_trace.jsonl",
        "conversation_trace.jsonl.lock",
        "conversation_trace.jsonl.sha256",
    ]
    again = fetch_one(spec, lines.append)
    assert (again.origin, again.sha256, again.path) == ("cache", SHA, got.path)
    assert server.requested == ["/conversation_trace.jsonl"]  # one download
    assert any("from the cache" in line for line in lines)


def test_two_jobs_fetching_at_once_download_once(tmp_path: Path, server: StaticFileServer) -> None:
    spec = _spec(f"{server.url}/conversation_trace.jsonl", tmp_path / "cache")
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(fetch_one(spec, lambda _l: None).origin))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)  # hang guard
    assert sorted(results) == ["cache", "cache", "cache", "downloaded"]
    assert server.requested == ["/conversation_trace.jsonl"]


def test_a_404_is_a_diagnosis_naming_the_url_the_status_and_the_local_override(
    tmp_path: Path, server: StaticFileServer
) -> None:
    url = f"{server.url}/missing_trace.jsonl"
    spec = _spec(url, tmp_path / "cache")
    with pytest.raises(BenchDatasetError) as caught:
        fetch_one(spec, lambda _l: None)
    message = str(caught.value)
    assert message.splitlines()[:3] == [
        "cannot fetch the mooncake-router trace ($.benchmark.dataset_path, from "
        "$SRT_MOONCAKE_TRACE_URL)",
        f"  url:    {url}",
        "  result: HTTP 404 File not found",
    ]
    assert "set benchmark.dataset_path to its path inside the container" in message
    assert len(message.splitlines()) <= 24  # one screen
    assert not Path(spec.cache_file).exists()


def test_an_unreachable_host_is_a_diagnosis(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/conversation_trace.jsonl"
    with pytest.raises(BenchDatasetError, match=r"result: unreachable: ConnectError"):
        fetch_one(_spec(url, tmp_path / "cache"), lambda _l: None)


def test_a_download_that_does_not_match_its_pin_is_discarded(
    tmp_path: Path, server: StaticFileServer
) -> None:
    spec = _spec(f"{server.url}/conversation_trace.jsonl", tmp_path / "cache", sha256="0" * 64)
    with pytest.raises(BenchDatasetError) as caught:
        fetch_one(spec, lambda _l: None)
    message = str(caught.value)
    assert f"  result: checksum mismatch: the download's sha256 is {SHA}, the URL pins " in message
    assert "(the download was discarded)" in message
    folder = Path(spec.cache_file).parent
    assert sorted(p.name for p in folder.iterdir()) == ["conversation_trace.jsonl.lock"]
    # the right pin downloads
    ok = fetch_one(msgspec.structs.replace(spec, sha256=SHA), lambda _l: None)
    assert ok.origin == "downloaded"


def test_a_cached_copy_that_changed_since_its_download_fails(
    tmp_path: Path, server: StaticFileServer
) -> None:
    spec = _spec(f"{server.url}/conversation_trace.jsonl", tmp_path / "cache")
    got = fetch_one(spec, lambda _l: None)
    Path(got.path).write_bytes(TRACE + b"{}\n")
    with pytest.raises(BenchDatasetError) as caught:
        fetch_one(spec, lambda _l: None)
    message = str(caught.value)
    assert f"but {SHA} was recorded when it was downloaded" in message
    assert f"delete {got.path} and {got.path}.sha256 to download it again" in message
    # a pin the cached copy does not match fails too, without a download
    Path(got.path).write_bytes(TRACE)
    with pytest.raises(BenchDatasetError, match="checksum mismatch: the cached copy's sha256"):
        fetch_one(msgspec.structs.replace(spec, sha256="1" * 64), lambda _l: None)
    assert server.requested == ["/conversation_trace.jsonl"]


def test_fetch_datasets_points_the_field_at_the_file_and_writes_the_record(
    tmp_path: Path, server: StaticFileServer
) -> None:
    spec = _spec(f"{server.url}/conversation_trace.jsonl", tmp_path / "cache")
    config = BenchRunConfig(
        benchmark=BenchmarkConfig(type="mooncake-router"),
        endpoint="http://127.0.0.1:1",
        model_name="m",
        total_gpus=1,
        fetch=(spec,),
    )
    out = tmp_path / "logs"
    resolved = fetch_datasets(config, out, lambda _l: None)
    assert resolved.benchmark.dataset_path == spec.cache_file
    record = msgspec.json.decode((out / "datasets_fetched.json").read_bytes(), type=FetchRecord)
    [entry] = record.datasets
    assert (entry.field, entry.url, entry.sha256, entry.origin) == (
        "dataset_path",
        spec.url,
        SHA,
        "downloaded",
    )

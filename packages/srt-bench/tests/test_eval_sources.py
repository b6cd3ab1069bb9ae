"""Where an eval's dataset is looked for, in order, the offline refusal, and the fetch against a
loopback mirror (also run in a job in tests/test_runners_local.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from srt_bench.errors import BenchDatasetError
from srt_bench.evals.datasets import read_questions
from srt_bench.evals.sources import find_or_fetch, plan_lookup
from srt_bench.testing import StaticFileServer, write_eval_mirror


def test_the_lookup_order_and_the_mirror() -> None:
    env = {"SRT_DATASETS_DIR": "/off", "HF_HOME": "/hf", "SRT_DATASETS_MIRROR": "http://m:8/"}
    lookup = plan_lookup("longbenchv2", dataset_path=None, datasets_dir="/dd", environ=env)
    assert lookup.candidates == (
        "/off/longbenchv2.jsonl",
        "/off/data.json",
        "/dd/longbenchv2.jsonl",
        "/dd/data.json",
        "/hf/datasets/srt-evals/longbenchv2/data.json",
    )
    assert lookup.hub_snapshots == "/hf/hub/datasets--THUDM--LongBench-v2/snapshots"
    assert (
        lookup.download_url
        == "http://m:8/huggingface.co/datasets/THUDM/LongBench-v2/resolve/main/data.json"
    )


def test_a_dataset_path_is_the_only_place_and_is_never_downloaded(tmp_path: Path) -> None:
    lookup = plan_lookup(
        "gsm8k", dataset_path=str(tmp_path / "no.jsonl"), datasets_dir=None, environ={}
    )
    assert lookup.candidates == (str(tmp_path / "no.jsonl"),)
    with pytest.raises(BenchDatasetError) as err:
        find_or_fetch(lookup)
    assert str(err.value) == (
        f"$.benchmark.dataset_path: the gsm8k dataset {tmp_path / 'no.jsonl'} does not exist; "
        "mount it into the benchmark's container or unset dataset_path to fetch the published file"
    )


def test_offline_with_nothing_on_the_node_names_every_place_looked(tmp_path: Path) -> None:
    env = {"HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "c")}
    lookup = plan_lookup("mmlu", dataset_path=None, datasets_dir=None, environ=env)
    assert lookup.download_url is None
    with pytest.raises(BenchDatasetError) as err:
        find_or_fetch(lookup)
    assert str(err.value) == (
        "mmlu: the dataset is not on this node and HF_DATASETS_OFFLINE=1 forbids a download; "
        f"looked in: {tmp_path / 'c' / 'srt-evals' / 'mmlu' / 'mmlu.csv'}; put mmlu.csv (or "
        "mmlu.jsonl) in $SRT_DATASETS_DIR or the cache folder, or set benchmark.dataset_path"
    )


def test_the_published_forms_read_as_questions(tmp_path: Path) -> None:
    mmlu = tmp_path / "mmlu.csv"
    mmlu.write_text(",Question,A,B,C,D,Answer,Subject\n0,Which?,w,x,y,z,C,math\n")
    [q] = read_questions("mmlu", mmlu)
    assert (q.gold, q.category) == ("C", "math")
    assert "C) y" in q.prompt_body
    gpqa = tmp_path / "gpqa_diamond.csv"
    gpqa.write_text(
        "Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,Incorrect Answer 3\n"
        "Which?,right,a,b,c\n"
    )
    [g] = read_questions("gpqa", gpqa)
    assert f"{g.gold}) right" in g.prompt_body
    data = tmp_path / "data.json"
    data.write_text(
        '[{"question": "Q", "context": "c c", "choice_A": "a", "choice_B": "b", '
        '"choice_C": "c", "choice_D": "d", "answer": "B", "domain": "Code"}]'
    )
    [lb] = read_questions("longbenchv2", data)
    assert (lb.gold, lb.category, lb.context_words) == ("B", "Code", 2)
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(BenchDatasetError, match=r"x.csv:2: a CSV row needs MMLU's columns"):
        read_questions("mmlu", bad)


def test_a_download_goes_through_the_cache_with_its_sha256_then_is_reused(tmp_path: Path) -> None:
    """The published file from a loopback mirror (srt_bench.fetch): recorded with its sha256,
    then found in the cache; offline, the cached copy is still used; a 404 names the mirror URL
    and the offline folder."""
    mirror = tmp_path / "mirror"
    [gsm8k, *_] = write_eval_mirror(mirror)
    sha = hashlib.sha256(gsm8k.read_bytes()).hexdigest()
    cache = tmp_path / "cache"
    with StaticFileServer(mirror) as server:
        env = {"SRT_DATASETS_MIRROR": server.url, "HF_DATASETS_CACHE": str(cache)}
        lookup = plan_lookup("gsm8k", dataset_path=None, datasets_dir=None, environ=env)
        first = find_or_fetch(lookup)
        again = find_or_fetch(lookup)
        assert len(server.requested) == 1
        missing = plan_lookup("longbenchv2", dataset_path=None, datasets_dir=None, environ=env)
        with pytest.raises(BenchDatasetError) as err:
            find_or_fetch(missing)
    assert (first.origin, first.sha256, first.eval) == ("downloaded", sha, "gsm8k")
    assert first.path == str(cache / "srt-evals" / "gsm8k" / "test.jsonl")
    assert first.url == f"{server.url}/raw.githubusercontent.com/openai/grade-school-math/" + (
        "master/grade_school_math/data/test.jsonl"
    )
    assert (again.origin, again.sha256) == ("cache", sha)
    offline = plan_lookup(
        "gsm8k", dataset_path=None, datasets_dir=None, environ={**env, "HF_HUB_OFFLINE": "1"}
    )
    cached = find_or_fetch(offline)
    assert (cached.origin, cached.url, cached.sha256) == ("cache", None, sha)
    message = str(err.value)
    assert "cannot fetch the longbenchv2 dataset ($.benchmark.dataset_path, from " in message
    assert "  result: HTTP 404 File not found" in message
    assert "put data.json (or longbenchv2.jsonl) in $SRT_DATASETS_DIR instead" in message

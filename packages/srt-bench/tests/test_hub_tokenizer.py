"""An `hf:` model's tokenizer fetched from the hub, and `custom_tokenizer` classes.

The hub is `srt_bench.testing.HubServer` on 127.0.0.1 (the hub's file protocol, served from local
folders); the client is the real `huggingface_hub`, pointed at it with `HF_ENDPOINT`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from srt_bench.errors import BenchHubError
from srt_bench.hub import fetch_hub_model
from srt_bench.testing import FixedStreamServer, HubServer, ServerBehaviour, write_tiny_model
from srt_bench.testing.hub_server import repo_commit

HUB_ID = "Qwen/Qwen3-0.6B"
#: A folder of more than the LFS threshold (tokenizer.json is served through a redirect).
VOCAB = 2000


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return write_tiny_model(tmp_path / "tiny-word", vocab_size=VOCAB)


def _env(hub: HubServer, home: Path, **extra: str) -> dict[str, str]:
    return {"HF_ENDPOINT": hub.url, "HF_HOME": str(home), **extra}


def test_the_tokenizer_files_are_fetched_once_and_then_read_offline(
    model: Path, tmp_path: Path
) -> None:
    home = tmp_path / "hf"
    with HubServer({HUB_ID: model}) as hub:
        snap = fetch_hub_model(f"hf:{HUB_ID}", _env(hub, home))
        assert snap.commit == repo_commit(model) and not snap.offline
        assert snap.files == ("tokenizer.json", "tokenizer_config.json", "config.json")
        assert Path(snap.folder) == home / "hub" / "models--Qwen--Qwen3-0.6B" / "snapshots" / (
            snap.commit
        )
        asked = hub.requests
        # only the files a client reads; the big tokenizer.json came through the LFS redirect
        assert ("GET", f"/api/models/{HUB_ID}/revision/main") in asked
        assert ("HEAD", f"/{HUB_ID}/resolve/main/tokenizer.json") in asked
        assert any(p.startswith("/lfs/") for _m, p in asked)
        again = fetch_hub_model(f"hf:{HUB_ID}", _env(hub, home, HF_HUB_OFFLINE="1"))
        assert hub.requests == asked  # offline: not one request
    assert again.commit == snap.commit and again.offline
    assert (Path(again.folder) / "tokenizer.json").read_bytes() == (
        model / "tokenizer.json"
    ).read_bytes()


def test_a_gated_repo_is_a_401_diagnosis_and_opens_with_hf_token(
    model: Path, tmp_path: Path
) -> None:
    home = tmp_path / "hf"
    secret = "hf_secret_value_123"
    with HubServer({"Org/gated": model}, gated={"Org/gated": secret}) as hub:
        with pytest.raises(BenchHubError) as refused:
            fetch_hub_model("hf:Org/gated", _env(hub, home))
        snap = fetch_hub_model("hf:Org/gated", _env(hub, home, HF_TOKEN=secret))
    text = str(refused.value)
    assert text.splitlines()[0] == (
        "cannot fetch the tokenizer of hf:Org/gated from the Hugging Face hub "
        "(HTTP 401, gated repository Org/gated)"
    )
    assert "HF_TOKEN is not set" in text and f"accept the license at {hub.url}/Org/gated" in text
    assert len(text.splitlines()) <= 6  # one screen
    assert snap.files
    # the token is only ever in the environment: nothing in the cache holds it
    for path in home.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_a_missing_repo_is_a_404_diagnosis(model: Path, tmp_path: Path) -> None:
    with HubServer({HUB_ID: model}) as hub, pytest.raises(BenchHubError) as refused:
        fetch_hub_model("hf:Org/missing", _env(hub, tmp_path))
    lines = str(refused.value).splitlines()
    assert lines[0].endswith("(HTTP 404, repository Org/missing not found)")
    assert "check the id in model.path" in lines[-1]


def test_offline_without_a_cached_snapshot_and_an_unreachable_hub_say_so(
    model: Path, tmp_path: Path
) -> None:
    with HubServer({HUB_ID: model}) as hub:
        with pytest.raises(BenchHubError, match="HF_HUB_OFFLINE is set and the snapshot is not"):
            fetch_hub_model(f"hf:{HUB_ID}", _env(hub, tmp_path, HF_HUB_OFFLINE="1"))
        url = hub.url
    # the server is gone: nothing listens there any more
    with pytest.raises(BenchHubError, match="hub unreachable"):
        fetch_hub_model(f"hf:{HUB_ID}", {"HF_ENDPOINT": url, "HF_HOME": str(tmp_path)})


def _bench_config(tmp_path: Path, url: str, tokenizer_path: str, **bench: Any) -> Path:
    doc = {
        "benchmark": {
            "type": "sa-bench",
            "isl": 12,
            "osl": 4,
            "concurrencies": [2],
            "num_prompts_mult": 2,
            "num_warmup_mult": 0,
            "random_range_ratio": 1.0,
            **bench,
        },
        "endpoint": url,
        "model_name": "Qwen3-0.6B",
        "tokenizer_path": tokenizer_path,
        "total_gpus": 1,
        "output_dir": str(tmp_path / "out"),
    }
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc))
    return path


def _srt_bench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "srt_bench", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,  # hang guard
        check=False,
    )


def test_sa_bench_builds_its_prompts_with_the_hub_tokenizer(model: Path, tmp_path: Path) -> None:
    home = tmp_path / "hf"
    behaviour = ServerBehaviour(mode="no_usage", output_tokens=3)
    with HubServer({HUB_ID: model}) as hub, FixedStreamServer(behaviour) as server:
        config = _bench_config(tmp_path, server.url, f"hf:{HUB_ID}")
        record = tmp_path / "hf_model.json"
        step = _srt_bench(
            "tokenizer", "--config", str(config), "--record", str(record), env=_env(hub, home)
        )
        assert step.returncode == 0, step.stderr
        fetched = len(hub.requests)
        # in a job the benchmark runs with HF_HUB_OFFLINE=1 after that step (srt_planner)
        run = _srt_bench("run", "--config", str(config), env=_env(hub, home, HF_HUB_OFFLINE="1"))
        assert run.returncode == 0, run.stderr
        assert len(hub.requests) == fetched  # read from the cache alone
    pinned = json.loads(record.read_text())
    assert pinned["repo"] == HUB_ID and pinned["commit"] == repo_commit(model)
    result = json.loads(
        (
            tmp_path / "out" / "sa-bench_isl_12_osl_4" / "results_concurrency_2_gpus_1.json"
        ).read_text()
    )
    assert result["tokenizer_id"] == f"hf:{HUB_ID}"
    assert result["input_lens"] == [12] * 4  # exactly isl tokens of the hub's tokenizer


CLASS_MODULE = '''
from pathlib import Path

from tokenizers import Tokenizer


class WordTokenizer:
    """A tokenizer class with the interface srt-bench needs (from_pretrained, encode, decode,
    vocab_size, all_special_ids)."""

    loaded_from = None

    def __init__(self, inner):
        self.inner = inner
        self.vocab_size = inner.get_vocab_size(with_added_tokens=False)
        self.all_special_ids = sorted(inner.get_added_tokens_decoder())

    @classmethod
    def from_pretrained(cls, path, **kwargs):
        Path(path, "..", "loaded-by-class").resolve().write_text(str(path))
        return cls(Tokenizer.from_file(str(Path(path) / "tokenizer.json")))

    def encode(self, text, add_special_tokens=True):
        return self.inner.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids):
        return self.inner.decode(ids)
'''


def test_a_tokenizer_class_is_imported_and_built_from_the_model_folder(
    model: Path, tmp_path: Path
) -> None:
    package = tmp_path / "py" / "my_tokenizers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "word.py").write_text(CLASS_MODULE)
    env = {"PYTHONPATH": str(tmp_path / "py")}
    with FixedStreamServer(ServerBehaviour(mode="no_usage", output_tokens=3)) as server:
        config = _bench_config(
            tmp_path, server.url, str(model), custom_tokenizer="my_tokenizers.word.WordTokenizer"
        )
        run = _srt_bench("run", "--config", str(config), env=env)
    assert run.returncode == 0, run.stderr
    assert (model.parent / "loaded-by-class").read_text() == str(model)
    result = json.loads(
        (
            tmp_path / "out" / "sa-bench_isl_12_osl_4" / "results_concurrency_2_gpus_1.json"
        ).read_text()
    )
    assert result["input_lens"] == [12] * 4
    assert result["output_token_sources"] == {"tokenizer": 4}  # counted by the class


def test_a_tokenizer_class_that_cannot_be_imported_is_a_clear_error(
    model: Path, tmp_path: Path
) -> None:
    config = _bench_config(
        tmp_path,
        "http://127.0.0.1:9",
        str(model),
        custom_tokenizer="sa_bench_tokenizers.vllm_deepseek_v4.VLLMDeepseekV4Tokenizer",
    )
    step = _srt_bench("tokenizer", "--config", str(config), env={})
    assert step.returncode == 1
    assert step.stderr.startswith(
        "srt-bench: error: $.benchmark.custom_tokenizer: cannot import module "
        "'sa_bench_tokenizers.vllm_deepseek_v4' for "
        "'sa_bench_tokenizers.vllm_deepseek_v4.VLLMDeepseekV4Tokenizer' in the benchmark's "
        "environment (No module named 'sa_bench_tokenizers')"
    ), step.stderr

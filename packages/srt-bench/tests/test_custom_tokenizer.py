"""`benchmark.custom_tokenizer`: a local tokenizer.json sa-bench builds and counts prompts with."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from srt_bench.config import BenchRunConfig, decode_run_config
from srt_bench.errors import BenchDatasetError
from srt_bench.execute import run_plan
from srt_bench.runners import BuildContext, build_plan
from srt_bench.testing import FixedStreamServer, ServerBehaviour, write_tiny_model


def _config(url: str, out: Path, tokenizer_path: str | None, **bench: Any) -> BenchRunConfig:
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
        "model_name": "Org/hub-model",
        # None: the model is pulled from the hub by the engine, nothing on disk (an `hf:` model)
        "tokenizer_path": tokenizer_path,
        "total_gpus": 1,
        "output_dir": str(out),
    }
    return decode_run_config(msgspec.json.encode(doc))


def _run(config: BenchRunConfig, out: Path) -> dict[str, Any]:
    plan = build_plan(config, BuildContext(out_dir=out))
    rc = run_plan(plan, config, out, log=lambda _l: None, stop=threading.Event())
    assert rc == 0
    path = out / "sa-bench_isl_12_osl_4" / "results_concurrency_2_gpus_1.json"
    result: dict[str, Any] = json.loads(path.read_text())
    return result


@pytest.mark.parametrize("form", ["folder", "file"])
def test_custom_tokenizer_path_is_used(form: str, tmp_path: Path) -> None:
    folder = write_tiny_model(tmp_path / "tokenizers" / "word", vocab_size=64)
    tokenizer = str(folder if form == "folder" else folder / "tokenizer.json")
    out = tmp_path / "out"
    # The server does not report usage, so output tokens are counted with the tokenizer too.
    with FixedStreamServer(ServerBehaviour(mode="no_usage", output_tokens=3)) as server:
        result = _run(_config(server.url, out, None, custom_tokenizer=tokenizer), out)
    assert result["tokenizer_id"] == tokenizer
    assert result["completed"] == 4 and result["failed"] == 0
    assert result["input_lens"] == [12] * 4  # synthetic prompts of exactly isl tokens
    assert result["output_token_sources"] == {"tokenizer": 4}


def test_custom_tokenizer_wins_over_the_model_folder(tmp_path: Path) -> None:
    model = write_tiny_model(tmp_path / "model", kind="byte-bpe")
    custom = write_tiny_model(tmp_path / "custom", vocab_size=64)
    out = tmp_path / "out"
    with FixedStreamServer(ServerBehaviour(honour_max_tokens=True)) as server:
        result = _run(_config(server.url, out, str(model), custom_tokenizer=str(custom)), out)
    assert result["tokenizer_id"] == str(custom)


def test_without_any_tokenizer_synthetic_prompts_are_refused(tmp_path: Path) -> None:
    """What custom_tokenizer fixes: an `hf:` model has no tokenizer.json on disk."""
    with FixedStreamServer(ServerBehaviour()) as server:
        config = _config(server.url, tmp_path, None)
        plan = build_plan(config, BuildContext(out_dir=tmp_path))
        with pytest.raises(BenchDatasetError, match="synthetic prompts need the model's tokenizer"):
            run_plan(plan, config, tmp_path, log=lambda _l: None, stop=threading.Event())

from __future__ import annotations

import random
from pathlib import Path

import pytest

from srt_bench.errors import BenchDatasetError
from srt_bench.prompts import (
    build_synthetic_prompts,
    draw_lengths,
    read_custom_dataset,
    read_tokenizer,
    sample_dataset_prompts,
)


def test_synthetic_prompts_have_exactly_their_token_count(tiny_model: Path) -> None:
    tok = read_tokenizer(tiny_model)
    prompts = build_synthetic_prompts(tok, count=50, isl=100, osl=20, range_ratio=0.8, seed=3)
    for p in prompts:
        assert 80 <= p.tokens <= 100
        assert len(tok.encode(p.text, add_special_tokens=False).ids) == p.tokens
        assert p.output_tokens is not None and 16 <= p.output_tokens <= 20
        assert "<unk>" not in p.text and "<s>" not in p.text
    again = build_synthetic_prompts(tok, count=50, isl=100, osl=20, range_ratio=0.8, seed=3)
    assert again == prompts


def test_ratio_one_gives_fixed_lengths(tiny_model: Path) -> None:
    tok = read_tokenizer(tiny_model)
    prompts = build_synthetic_prompts(tok, count=5, isl=33, osl=7, range_ratio=1.0, seed=0)
    assert {p.tokens for p in prompts} == {33}
    assert {p.output_tokens for p in prompts} == {7}


def test_draw_lengths_bounds() -> None:
    got = draw_lengths(random.Random(1), 10, 0.5, 200)
    assert min(got) == 5 and max(got) == 10
    with pytest.raises(BenchDatasetError, match=r"random_range_ratio 1.5 is not in \[0, 1\]"):
        draw_lengths(random.Random(1), 10, 1.5, 1)


def test_missing_tokenizer_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(BenchDatasetError, match="point tokenizer_path at the model folder"):
        read_tokenizer(tmp_path)


def test_custom_dataset(tmp_path: Path, tiny_model: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "w1 w2 w3", "output_len": 5}\n\n{"prompt": "w4"}\n')
    rows = read_custom_dataset(data)
    prompts = sample_dataset_prompts(rows, read_tokenizer(tiny_model), count=4, osl=9, seed=0)
    assert sorted((p.tokens, p.output_tokens) for p in prompts) == [(1, 9), (1, 9), (3, 5), (3, 5)]


def test_custom_dataset_errors_name_the_line(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "ok"}\n{"text": "no"}\n')
    with pytest.raises(BenchDatasetError, match=r"d\.jsonl:2: Object contains unknown field"):
        read_custom_dataset(data)
    with pytest.raises(BenchDatasetError, match="cannot read the dataset"):
        read_custom_dataset(tmp_path / "missing.jsonl")


def test_byte_level_bpe_prompts_are_exact_too(tmp_path: Path) -> None:
    from srt_bench.testing import write_tiny_model

    tok = read_tokenizer(write_tiny_model(tmp_path / "bpe", kind="byte-bpe"))
    prompts = build_synthetic_prompts(tok, count=20, isl=64, osl=8, range_ratio=0.5, seed=1)
    for p in prompts:
        assert len(tok.encode(p.text, add_special_tokens=False).ids) == p.tokens
        assert "\ufffd" not in p.text  # no broken UTF-8 from lone byte tokens


def test_prompts_whose_tokens_merge_are_repaired_to_the_exact_length(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models

    # No pre-tokenizer: "a" + "b" decode to "ab", which encodes as the single token "ab".
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    merges = [("a", "b"), ("b", "c"), ("ab", "c")]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    file = tmp_path / "tokenizer.json"
    tok.save(str(file))
    loaded = read_tokenizer(file)
    prompts = build_synthetic_prompts(loaded, count=30, isl=40, osl=4, range_ratio=0.5, seed=2)
    for p in prompts:
        assert len(loaded.encode(p.text, add_special_tokens=False).ids) == p.tokens

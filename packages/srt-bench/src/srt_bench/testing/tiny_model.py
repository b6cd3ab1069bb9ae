"""A tiny model folder (tokenizer + config) made locally, so nothing is downloaded at run time.

`kind="word"`: a word-level vocabulary `w0 … w<n-1>` split on whitespace. Every token id decodes
to one visible word, so a server that streams one token per chunk really sends text deltas.

`kind="byte-bpe"`: a small byte-level BPE trained here on a fixed corpus. Random token ids of such
a vocabulary decode to invalid UTF-8 most of the time; the Dynamo mocker then streams no text at
all (a role chunk, a final chunk and `usage`), which reproduces the known mocker trap.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

__all__ = ["SPECIAL_TOKENS", "write_tiny_model"]

SPECIAL_TOKENS = ("<unk>", "<s>", "</s>")


_CORPUS = (
    "the quick brown fox jumps over the lazy dog. ",
    "pack my box with five dozen liquor jugs! 0123456789 ",
    "h\u00e9llo w\u00f6rld \u00fcn\u00efcode \u2713 \u2192 \u2211 \u4f60\u597d \u4e16\u754c ",
)


def _word_tokenizer(vocab_size: int) -> Tokenizer:
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS)}
    for i in range(vocab_size):
        vocab[f"w{i}"] = len(vocab)
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
    # WordPiece decoding joins words with single spaces and keeps them as they are.
    tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    return tokenizer


def _byte_bpe_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([line * 3 for line in _CORPUS], trainer)
    return tokenizer


def write_tiny_model(
    folder: Path, *, kind: Literal["word", "byte-bpe"] = "word", vocab_size: int = 2000
) -> Path:
    """Write `tokenizer.json`, `tokenizer_config.json` and `config.json` into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _word_tokenizer(vocab_size) if kind == "word" else _byte_bpe_tokenizer()
    tokenizer.save(str(folder / "tokenizer.json"))
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": len(vocab),
        "max_position_embeddings": 32768,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": "bfloat16",
    }
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "model_max_length": 32768,
        # Chat prompts are the plain concatenation of the messages: a chat request's prompt
        # tokens equal the completion request's.
        "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}",
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    (folder / "tokenizer_config.json").write_text(
        json.dumps(tokenizer_config, indent=2, sort_keys=True) + "\n"
    )
    return folder

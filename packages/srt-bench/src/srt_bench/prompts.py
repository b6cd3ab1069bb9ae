"""Prompts for sa-bench: synthetic prompts of an exact token length, or a custom dataset file.

Synthetic prompts are random token ids of the model's own tokenizer, decoded to text and
re-encoded until the text is exactly the wanted number of tokens (decode/encode is not always a
round trip for subword vocabularies). With `random_range_ratio` r, input and output lengths are
drawn uniformly from `[floor(L * r), L]`.
"""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import msgspec
from tokenizers import Tokenizer

from srt_bench.errors import BenchDatasetError
from srt_bench.tokenizer import BenchTokenizer, encode_ids

__all__ = [
    "Prompt",
    "build_synthetic_prompts",
    "draw_lengths",
    "read_custom_dataset",
    "read_tokenizer",
    "round_trip_vocab",
    "sample_dataset_prompts",
]

_MAX_ROUNDS = 16
_SPACE_WORD = re.compile(r"^ [A-Za-z]+$")
_MIN_WORDS = 16


class Prompt(msgspec.Struct, frozen=True):
    text: str
    #: Tokens of `text` under the model's tokenizer (no special tokens).
    tokens: int
    #: `max_tokens` to request; None lets the server decide.
    output_tokens: int | None


class _DatasetRow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    prompt: str
    output_len: int | None = None


def read_tokenizer(folder: str | Path) -> Tokenizer:
    """Load `<folder>/tokenizer.json` (a file path is accepted too)."""
    path = Path(folder)
    file = path / "tokenizer.json" if path.is_dir() else path
    try:
        return Tokenizer.from_file(str(file))
    except Exception as exc:  # tokenizers raises a bare Exception for every load failure
        raise BenchDatasetError(
            f"cannot load a tokenizer from {file}: {exc}; point tokenizer_path at the model folder "
            "holding tokenizer.json"
        ) from exc


def draw_lengths(rng: random.Random, length: int, ratio: float, n: int) -> list[int]:
    """`n` lengths uniform in `[floor(length * ratio), length]`, at least 1."""
    if not 0.0 <= ratio <= 1.0:
        raise BenchDatasetError(f"random_range_ratio {ratio} is not in [0, 1]")
    low = max(1, math.floor(length * ratio))
    high = max(low, length)
    return [rng.randint(low, high) for _ in range(n)]


def _special_ids(tokenizer: BenchTokenizer) -> set[int]:
    """Added tokens and the unknown token: never part of a synthetic prompt."""
    ids = set(tokenizer.get_added_tokens_decoder())
    for name in ("<unk>", "[UNK]", "<|endoftext|>"):
        token_id = tokenizer.token_to_id(name)
        if token_id is not None:
            ids.add(token_id)
    return ids


def round_trip_vocab(tokenizer: BenchTokenizer) -> list[int]:
    """Regular token ids that decode to text which encodes back to exactly that id (drops
    special tokens and, in byte-level vocabularies, bytes that are not valid UTF-8 alone)."""
    special = _special_ids(tokenizer)
    ids = [i for i in range(tokenizer.get_vocab_size(with_added_tokens=False)) if i not in special]
    texts = tokenizer.decode_batch([[i] for i in ids])
    encoded = encode_ids(tokenizer, texts)
    stable = [
        (i, text) for i, text, enc in zip(ids, texts, encoded, strict=True) if text and enc == [i]
    ]
    # Space-led words (" the") start a new pre-token in byte-level and similar vocabularies, so
    # they never merge with their neighbours: prompts built from them keep their exact length.
    words = [i for i, text in stable if _SPACE_WORD.match(text)]
    if len(words) >= _MIN_WORDS:
        return words
    return [i for i, _ in stable]


def _repair(
    tokenizer: BenchTokenizer,
    rng: random.Random,
    vocab: list[int],
    *,
    allowed: set[int],
    got: list[int],
    n: int,
) -> str:
    """Re-encode rounds until the text is exactly `n` tokens."""
    for _ in range(_MAX_ROUNDS):
        # Keep what survived the round trip, drop ids outside the regular vocabulary, then trim
        # or refill to n, decode and check again.
        kept = [i for i in got if i in allowed][:n]
        ids = kept + rng.choices(vocab, k=n - len(kept))
        text = tokenizer.decode(ids)
        got = tokenizer.encode(text, add_special_tokens=False).ids
        if len(got) == n:
            return text
    raise BenchDatasetError(
        f"could not build a prompt of exactly {n} tokens with this tokenizer after {_MAX_ROUNDS} "
        "rounds of decode/encode; use a custom dataset (dataset_name: custom)"
    )


def build_synthetic_prompts(
    tokenizer: BenchTokenizer,
    *,
    count: int,
    isl: int,
    osl: int,
    range_ratio: float,
    seed: int,
) -> list[Prompt]:
    """`count` prompts of exactly their drawn input length (deterministic for a seed)."""
    rng = random.Random(seed)
    vocab = round_trip_vocab(tokenizer)
    if not vocab:
        raise BenchDatasetError("the tokenizer has no regular tokens to build prompts from")
    input_lens = draw_lengths(rng, isl, range_ratio, count)
    output_lens = draw_lengths(rng, osl, range_ratio, count)
    # One batch decode/encode for all prompts (the tokenizer parallelises it); only prompts whose
    # text re-encodes to another length go through the repair rounds.
    drawn = [rng.choices(vocab, k=n) for n in input_lens]
    texts = tokenizer.decode_batch(drawn)
    encoded = encode_ids(tokenizer, texts)
    allowed = set(vocab)
    prompts = []
    for n, o, drawn_text, enc in zip(input_lens, output_lens, texts, encoded, strict=True):
        text = drawn_text
        if len(enc) != n:
            text = _repair(tokenizer, rng, vocab, allowed=allowed, got=enc, n=n)
        prompts.append(Prompt(text=text, tokens=n, output_tokens=o))
    return prompts


def read_custom_dataset(path: Path) -> list[_DatasetRow]:
    """JSON Lines, one `{"prompt": str, "output_len": int?}` object per line."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise BenchDatasetError(
            f"cannot read the dataset {path}: {exc.strerror}; set benchmark.dataset_path to a "
            "JSON Lines file"
        ) from exc
    rows: list[_DatasetRow] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append(msgspec.json.decode(line, type=_DatasetRow))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise BenchDatasetError(
                f"{path}:{number}: {exc}; each line must be "
                '{"prompt": "...", "output_len": 128} (output_len optional)'
            ) from exc
    if not rows:
        raise BenchDatasetError(f"{path}: the dataset has no rows")
    return rows


def sample_dataset_prompts(
    rows: list[_DatasetRow],
    tokenizer: BenchTokenizer | None,
    *,
    count: int,
    osl: int | None,
    seed: int,
) -> list[Prompt]:
    """`count` prompts drawn from the rows (shuffled, cycling when there are fewer rows)."""
    rng = random.Random(seed)
    order = list(range(len(rows)))
    rng.shuffle(order)
    out: list[Prompt] = []
    for i in range(count):
        row = rows[order[i % len(order)]]
        tokens = (
            len(tokenizer.encode(row.prompt, add_special_tokens=False).ids)
            if tokenizer is not None
            else 0
        )
        out.append(Prompt(text=row.prompt, tokens=tokens, output_tokens=row.output_len or osl))
    return out

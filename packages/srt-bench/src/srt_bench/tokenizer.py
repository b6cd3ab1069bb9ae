"""The tokenizer sa-bench builds and counts prompts with, from one of three sources:

- a local ``tokenizer.json`` or the folder holding it (the model folder, or
  ``benchmark.custom_tokenizer`` as an absolute path): read with ``tokenizers``;
- an ``hf:<repo>`` model: its tokenizer files fetched into the HF cache first
  (:mod:`srt_bench.hub`);
- a tokenizer class, ``benchmark.custom_tokenizer: module.ClassName``: the module is imported in
  this process and ``ClassName.from_pretrained(<model folder>)`` builds the tokenizer (the model
  folder, or the hub snapshot folder of an ``hf:`` model). The object must have
  ``encode(text, add_special_tokens=False) -> list[int]``, ``decode(ids) -> str`` and
  ``vocab_size``; ``all_special_ids`` is used when present (packages/srt-bench/README.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
from tokenizers import Tokenizer

from srt_bench.errors import BenchTokenizerError
from srt_bench.hub import HubSnapshot, fetch_hub_model, is_hub_ref

__all__ = [
    "BenchTokenizer",
    "ClassTokenizer",
    "LoadedTokenizer",
    "encode_ids",
    "load_bench_tokenizer",
]


class _Encoding(msgspec.Struct, frozen=True):
    ids: list[int]


class ClassTokenizer:
    """A ``from_pretrained`` tokenizer object behind the few ``tokenizers.Tokenizer`` methods
    sa-bench calls."""

    def __init__(self, inner: Any, name: str) -> None:
        self.inner = inner
        self.name = name

    def encode(self, text: str, add_special_tokens: bool = True) -> _Encoding:
        ids = self.inner.encode(text, add_special_tokens=add_special_tokens)
        return _Encoding(ids=[int(i) for i in ids])

    def encode_batch(
        self, texts: Sequence[str], add_special_tokens: bool = True
    ) -> list[_Encoding]:
        return [self.encode(t, add_special_tokens=add_special_tokens) for t in texts]

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.inner.decode(list(ids)))

    def decode_batch(self, batch: Sequence[Sequence[int]]) -> list[str]:
        return [self.decode(ids) for ids in batch]

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        size = getattr(self.inner, "vocab_size", None)
        if not isinstance(size, int):
            raise BenchTokenizerError(
                f"custom_tokenizer {self.name}: the tokenizer has no integer vocab_size"
            )
        return size

    def get_added_tokens_decoder(self) -> dict[int, Any]:
        special = getattr(self.inner, "all_special_ids", None) or ()
        return {int(i): None for i in special}

    def token_to_id(self, token: str) -> int | None:
        convert = getattr(self.inner, "convert_tokens_to_ids", None)
        if convert is None:
            return None
        value = convert(token)
        return value if isinstance(value, int) and value >= 0 else None


BenchTokenizer = Tokenizer | ClassTokenizer


def encode_ids(tokenizer: BenchTokenizer, texts: list[str]) -> list[list[int]]:
    """Token ids of each text, no special tokens (one batch call)."""
    if isinstance(tokenizer, ClassTokenizer):
        return [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
    return [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


class LoadedTokenizer(msgspec.Struct, frozen=True, kw_only=True):
    tokenizer: Any  # BenchTokenizer
    #: Where it came from, for the result's ``tokenizer_id``.
    source: str
    #: The fetched hub snapshot of an ``hf:`` model (pinned in recipe.lock.yaml).
    hub: HubSnapshot | None = None


def _import_class(path: str) -> Any:
    module_name, _, class_name = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BenchTokenizerError(
            f"$.benchmark.custom_tokenizer: cannot import module {module_name!r} for "
            f"{path!r} in the benchmark's environment ({exc}); install the package that "
            "provides it into the benchmark's container or interpreter (or add its folder to "
            "PYTHONPATH in benchmark.env), or set custom_tokenizer to a local tokenizer folder"
        ) from exc
    cls = getattr(module, class_name, None)
    if cls is None or not hasattr(cls, "from_pretrained"):
        raise BenchTokenizerError(
            f"$.benchmark.custom_tokenizer: module {module_name!r} has no class {class_name!r} "
            "with a from_pretrained(path) method; name a tokenizer class as module.ClassName"
        )
    return cls


def load_bench_tokenizer(
    source: str | None,
    class_path: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedTokenizer | None:
    """The tokenizer for ``source`` (a local path or ``hf:<repo>``), built by ``class_path`` when
    given; None without a source. Raises BenchHubError / BenchTokenizerError / BenchDatasetError."""
    from srt_bench.prompts import read_tokenizer

    if source is None:
        return None
    hub = fetch_hub_model(source, environ) if is_hub_ref(source) else None
    folder = hub.folder if hub is not None else source
    if class_path is None:
        return LoadedTokenizer(tokenizer=read_tokenizer(folder), source=source, hub=hub)
    cls = _import_class(class_path)
    try:
        inner = cls.from_pretrained(folder)
    except Exception as exc:  # a third-party class: any failure is the class's
        raise BenchTokenizerError(
            f"$.benchmark.custom_tokenizer: {class_path}.from_pretrained({folder!r}) failed: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    for method in ("encode", "decode"):
        if not callable(getattr(inner, method, None)):
            raise BenchTokenizerError(
                f"$.benchmark.custom_tokenizer: {class_path}.from_pretrained() returned an "
                f"object without {method}(); the class must give encode(text, "
                "add_special_tokens=False) -> list[int], decode(ids) -> str and vocab_size"
            )
    return LoadedTokenizer(tokenizer=ClassTokenizer(inner, class_path), source=source, hub=hub)

"""Models on the Hugging Face hub (``model.path: hf:<org>/<name>[@revision]``): the few files the
benchmark client needs, fetched with ``huggingface_hub`` into the cluster's HF cache.

Only the tokenizer and config files are fetched (:data:`WANTED_FILES`), never weights: the
engines download those themselves. The cache is ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
the library's default; on a cluster ``HF_HOME`` is a shared folder, so one download serves every
node and every later job. ``HF_TOKEN`` (only ever read from the environment), ``HF_ENDPOINT``
and ``HF_HUB_OFFLINE`` are honoured. The resolved commit is returned so the job can pin it in
``recipe.lock.yaml`` (``lock.hf_model``).

A refused repository (401 gated or private, 404 missing, an unknown revision), an unreachable
hub without a cached copy, or an offline cache without the snapshot raise
:class:`~srt_bench.errors.BenchHubError` whose message is the one-screen diagnosis: status, repo,
why and how to fix it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

from srt_bench.errors import BenchHubError
from srt_schema.served import HF_MODEL_PREFIX, parse_hf_model

__all__ = [
    "WANTED_FILES",
    "HubCheck",
    "HubSnapshot",
    "check_hub_model",
    "fetch_hub_model",
    "is_hub_ref",
]

#: The files a benchmark client reads, fetched when the repository has them.
WANTED_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "tokenizer.model",
    "vocab.json",
    "merges.txt",
    "config.json",
    "generation_config.json",
)
_OFFLINE_VALUES = frozenset({"1", "true", "yes", "on"})


class HubSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """One fetched model: what ``recipe.lock.yaml`` records under ``lock.hf_model``."""

    #: ``hf:<repo>[@revision]`` as the recipe wrote it.
    model: str
    repo: str
    #: The revision asked for (``main`` when the recipe names none).
    revision: str
    #: The commit that revision resolved to (the snapshot folder's name).
    commit: str
    endpoint: str
    #: The local snapshot folder holding ``files``.
    folder: str
    files: tuple[str, ...]
    #: True when nothing was asked of the hub (``HF_HUB_OFFLINE``, or the hub was unreachable
    #: and the cache had the snapshot).
    offline: bool


def is_hub_ref(value: str | None) -> bool:
    return value is not None and value.startswith(HF_MODEL_PREFIX)


def _endpoint(environ: Mapping[str, str]) -> str:
    return (environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def _cache_dir(environ: Mapping[str, str]) -> str:
    if environ.get("HF_HUB_CACHE"):
        return environ["HF_HUB_CACHE"]
    if environ.get("HF_HOME"):
        return str(Path(environ["HF_HOME"]) / "hub")
    cache = Path(environ.get("XDG_CACHE_HOME") or Path("~/.cache").expanduser())
    return str(cache / "huggingface" / "hub")


def _diagnosis(model: str, endpoint: str, status: str, why: str, fix: str) -> str:
    return (
        f"cannot fetch the tokenizer of {model} from the Hugging Face hub ({status})\n"
        f"  hub:  {endpoint}\n"
        f"  why:  {why}\n"
        f"  fix:  {fix}"
    )


def _http_status(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    return f"HTTP {code}" if code is not None else type(exc).__name__


def fetch_hub_model(model: str, environ: Mapping[str, str] | None = None) -> HubSnapshot:
    """Fetch :data:`WANTED_FILES` of ``model`` (``hf:<repo>[@revision]``) into the HF cache (or
    find them there offline) and return where they are and which commit they are."""
    from huggingface_hub import HfApi, hf_hub_download

    env = os.environ if environ is None else environ
    repo, asked = parse_hf_model(model)
    revision = asked or "main"
    endpoint = _endpoint(env)
    cache = _cache_dir(env)
    token = env.get("HF_TOKEN") or None
    offline = env.get("HF_HUB_OFFLINE", "").strip().lower() in _OFFLINE_VALUES
    where = f"{repo}@{revision}"
    if not offline:
        try:
            info = HfApi(endpoint=endpoint, token=token).model_info(repo, revision=revision)
            present = {s.rfilename for s in info.siblings or ()}
            files = [f for f in WANTED_FILES if f in present]
            paths = [
                hf_hub_download(
                    repo, f, revision=revision, cache_dir=cache, endpoint=endpoint, token=token
                )
                for f in files
            ]
        except Exception as exc:
            refusal = _refusal(exc, model, repo, revision, endpoint, token=token is not None)
            if refusal is not None:
                raise refusal from exc
            if not _unreachable(exc):
                raise
            # the hub cannot be reached (huggingface_hub's connection errors): try the cache
            cached = _cached(repo, revision, cache)
            if cached is None:
                raise BenchHubError(
                    _diagnosis(
                        model,
                        endpoint,
                        f"hub unreachable: {type(exc).__name__}",
                        f"{endpoint} cannot be reached from this node and {cache} holds no "
                        f"snapshot of {where}",
                        "fetch it once where the hub is reachable into the shared HF_HOME "
                        f"(e.g. `hf download {repo} tokenizer.json config.json`), or set "
                        "HF_ENDPOINT to a mirror this node can reach",
                    )
                ) from exc
            return _snapshot(model, repo, revision, endpoint, cached, offline=True)
        if not paths:
            raise BenchHubError(
                _diagnosis(
                    model,
                    endpoint,
                    f"no tokenizer files in {where}",
                    f"{repo} has none of {', '.join(WANTED_FILES[:4])}",
                    "set benchmark.custom_tokenizer to a folder holding the model's tokenizer.json",
                )
            )
        return _snapshot(model, repo, revision, endpoint, Path(paths[0]).parent, offline=False)
    cached = _cached(repo, revision, cache)
    if cached is None:
        raise BenchHubError(
            _diagnosis(
                model,
                endpoint,
                "HF_HUB_OFFLINE is set and the snapshot is not cached",
                f"{cache} holds no snapshot of {where}",
                "run one job without HF_HUB_OFFLINE (it fetches the tokenizer into the shared "
                f"HF_HOME), or `hf download {repo} tokenizer.json config.json` with the same "
                "HF_HOME",
            )
        )
    return _snapshot(model, repo, revision, endpoint, cached, offline=True)


_FIX_TOKEN = (
    "set HF_TOKEN in the environment srtctl runs in (it reaches the job through the "
    "environment and is never written to a file)"
)


def _refusal(
    exc: BaseException, model: str, repo: str, revision: str, endpoint: str, *, token: bool
) -> BenchHubError | None:
    """The diagnosis of a hub refusal (401 gated or private, 404, unknown revision, another HTTP
    status); None for any other error."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    status = _http_status(exc)
    if isinstance(exc, GatedRepoError):
        return BenchHubError(
            _diagnosis(
                model,
                endpoint,
                f"{status}, gated repository {repo}",
                f"{repo} is gated: its files need the token of an account that accepted its "
                "license" + ("" if token else ", and HF_TOKEN is not set"),
                f"accept the license at {endpoint}/{repo}, then {_FIX_TOKEN}",
            )
        )
    if isinstance(exc, RepositoryNotFoundError):
        return BenchHubError(
            _diagnosis(
                model,
                endpoint,
                f"{status}, repository {repo} not found",
                f"there is no model repository {repo} on this hub, or it is private and "
                + ("HF_TOKEN has no access to it" if token else "HF_TOKEN is not set"),
                "check the id in model.path (hf:<org>/<name>[@revision]); for a private "
                f"repository {_FIX_TOKEN}",
            )
        )
    if isinstance(exc, RevisionNotFoundError):
        return BenchHubError(
            _diagnosis(
                model,
                endpoint,
                f"{status}, revision {revision!r} not found",
                f"{repo} has no branch, tag or commit {revision!r}",
                "fix the part after '@' in model.path, or drop it to use main",
            )
        )
    if isinstance(exc, HfHubHTTPError):
        return BenchHubError(
            _diagnosis(
                model,
                endpoint,
                status,
                f"the hub refused {repo}@{revision}: {str(exc).splitlines()[0]}",
                "retry later, or check HF_ENDPOINT and HF_TOKEN",
            )
        )
    return None


class HubCheck(msgspec.Struct, frozen=True, kw_only=True):
    """What ``srtctl preflight`` learnt about an ``hf:`` model from the hub."""

    status: Literal["ok", "refused", "unreachable", "offline"]
    #: The commit (ok), the diagnosis (refused) or why it was not checked.
    detail: str


def check_hub_model(model: str, environ: Mapping[str, str] | None = None) -> HubCheck:
    """Ask the hub whether ``model`` resolves (its info only, nothing downloaded)."""
    from huggingface_hub import HfApi, hf_hub_url

    env = os.environ if environ is None else environ
    repo, asked = parse_hf_model(model)
    revision = asked or "main"
    endpoint = _endpoint(env)
    if env.get("HF_HUB_OFFLINE", "").strip().lower() in _OFFLINE_VALUES:
        return HubCheck(status="offline", detail="HF_HUB_OFFLINE is set: the hub was not asked")
    token = env.get("HF_TOKEN") or None
    try:
        api = HfApi(endpoint=endpoint, token=token)
        info = api.model_info(repo, revision=revision)
        # the info of a gated repo is public: ask for a file's metadata as the job will
        present = {sib.rfilename for sib in info.siblings or ()}
        for name in [f for f in WANTED_FILES if f in present][:1]:
            url = hf_hub_url(repo, name, revision=revision, endpoint=endpoint)
            api.get_hf_file_metadata(url=url)
    except Exception as exc:
        refusal = _refusal(exc, model, repo, revision, endpoint, token=token is not None)
        if refusal is not None:
            return HubCheck(status="refused", detail=str(refusal))
        if not _unreachable(exc):
            raise
        return HubCheck(
            status="unreachable",
            detail=f"{endpoint} cannot be reached from this machine ({type(exc).__name__}); "
            "not checked here: the job's bench_tokenizer step fetches it, or reads HF_HOME "
            "when the nodes are offline",
        )
    return HubCheck(status="ok", detail=f"{repo}@{revision} is commit {info.sha}")


def _unreachable(exc: BaseException) -> bool:
    """A connection failure: an OSError, or a transport error of huggingface_hub's HTTP client
    (httpx-style, named by class so this package does not import the client itself)."""
    return isinstance(exc, OSError) or any(
        c.__name__ in ("TransportError", "TimeoutException") and c.__module__.startswith("httpx")
        for c in type(exc).__mro__
    )


def _repo_folder(repo: str, cache: str) -> Path:
    return Path(cache) / ("models--" + repo.replace("/", "--"))


def _cached(repo: str, revision: str, cache: str) -> Path | None:
    """The cached snapshot folder of ``repo`` at ``revision`` (a ref or a commit), or None."""
    folder = _repo_folder(repo, cache)
    ref = folder / "refs" / revision
    commit = ref.read_text().strip() if ref.is_file() else revision
    snapshot = folder / "snapshots" / commit
    if not snapshot.is_dir() or not any((snapshot / f).exists() for f in WANTED_FILES):
        return None
    return snapshot


def _snapshot(
    model: str, repo: str, revision: str, endpoint: str, folder: Path, *, offline: bool
) -> HubSnapshot:
    files = tuple(f for f in WANTED_FILES if (folder / f).exists())
    return HubSnapshot(
        model=model,
        repo=repo,
        revision=revision,
        commit=folder.name,
        endpoint=endpoint,
        folder=str(folder),
        files=files,
        offline=offline,
    )

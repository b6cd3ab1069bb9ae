"""A test double of the Hugging Face hub serving model repositories from local folders.

It speaks the part of the hub's HTTP protocol ``huggingface_hub`` uses to fetch files:

- ``GET /api/models/<repo>/revision/<rev>``: the model info (``id``, ``sha`` = the commit,
  ``siblings`` = the files);
- ``HEAD`` / ``GET /<repo>/resolve/<rev>/<file>``: the file, with ``X-Repo-Commit``, ``ETag``
  (the git blob id) and ``Content-Length``; a file of more than :data:`LFS_THRESHOLD` bytes is an
  LFS file as on the hub: ``302`` to ``<store>/lfs/<sha256>`` on a second port (another origin,
  as the hub's CDN is) with ``X-Linked-Etag`` (its sha256) and ``X-Linked-Size``, and that
  address serves the bytes;
- refusals with the hub's ``X-Error-Code`` / ``X-Error-Message`` headers: a gated repository
  answers ``401 GatedRepo`` unless the request carries ``Authorization: Bearer <its token>``; an
  unknown repository ``404 RepoNotFound``, an unknown revision ``404 RevisionNotFound``, an
  unknown file ``404 EntryNotFound``.

A repository has one revision, ``main``, whose commit is a hash of its files (a 40-hex id, so the
same folder is the same commit in every run). ``default`` serves one folder under every repository
id not named otherwise (the corpus-run tier: the stand-in model for every hub id the corpus uses).
Every request is recorded (``requests``: method and path) so a test can tell what was fetched.

    with HubServer({"Qwen/Qwen3-0.6B": Path("examples/models/tiny-word")}) as hub:
        env = {"HF_ENDPOINT": hub.url, "HF_HOME": ...}

``python -m srt_bench.testing.hub_server --repo ORG/NAME=FOLDER [--default FOLDER] [--gated
ORG/NAME=TOKEN] [--port N]`` runs it in the foreground and prints its URL.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
import urllib.parse
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

__all__ = ["LFS_THRESHOLD", "HubServer", "repo_commit"]

#: Files larger than this are served the way the hub serves LFS files (a redirect).
LFS_THRESHOLD = 10_000
_MAIN = "main"


def repo_commit(folder: Path) -> str:
    """The commit id the double gives ``folder``: a sha1 over its file names and bytes."""
    digest = hashlib.sha1()
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class _Hub:
    def __init__(
        self,
        repos: Mapping[str, Path],
        default: Path | None,
        gated: Mapping[str, str],
    ) -> None:
        self.repos = dict(repos)
        self.default = default
        self.gated = dict(gated)
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        #: Base URL of the LFS store (another origin, as the hub's CDN is).
        self.lfs_url = ""

    def folder(self, repo: str) -> Path | None:
        return self.repos.get(repo) or (self.default if repo not in self.gated else None)


class _Handler(BaseHTTPRequestHandler):
    server_version = "srt-hub-double/1"
    hub: _Hub

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def do_GET(self) -> None:
        self._serve(body=True)

    def _refuse(self, status: int, code: str, message: str) -> None:
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        payload = json.dumps({"error": message}).encode()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(payload)

    def _send(self, data: bytes, headers: Mapping[str, str], *, body: bool) -> None:
        self.send_response(200)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _serve(self, *, body: bool) -> None:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        with self.hub.lock:
            self.hub.requests.append((self.command, path))
        if path.startswith("/lfs/"):
            self._lfs(path[len("/lfs/") :], body=body)
        elif path.startswith("/api/models/") and "/revision/" in path:
            repo, _, revision = path[len("/api/models/") :].partition("/revision/")
            folder = self._repo(repo, revision)
            if folder is not None:
                info = {
                    "id": repo,
                    "modelId": repo,
                    "sha": repo_commit(folder),
                    "private": False,
                    "gated": "manual" if repo in self.hub.gated else False,
                    "siblings": [
                        {"rfilename": p.name} for p in sorted(folder.iterdir()) if p.is_file()
                    ],
                }
                self._send(
                    json.dumps(info).encode(), {"Content-Type": "application/json"}, body=body
                )
        elif "/resolve/" in path:
            repo, _, rest = path.lstrip("/").partition("/resolve/")
            revision, _, name = rest.partition("/")
            folder = self._repo(repo, revision)
            if folder is not None:
                self._file(repo, folder, name, body=body)
        else:
            self._refuse(404, "RepoNotFound", f"no route {path}")

    def _repo(self, repo: str, revision: str) -> Path | None:
        folder = self.hub.folder(repo)
        if folder is None:
            self._refuse(404, "RepoNotFound", f"Repository Not Found for url: {self.path}.")
            return None
        token = self.hub.gated.get(repo)
        if token is not None and self.headers.get("Authorization") != f"Bearer {token}":
            self._refuse(
                401,
                "GatedRepo",
                f"Access to model {repo} is restricted. You must have access to it and be "
                "authenticated to access it. Please log in.",
            )
            return None
        if revision not in (_MAIN, repo_commit(folder)):
            self._refuse(404, "RevisionNotFound", f"Invalid rev id: {revision}")
            return None
        return folder

    def _file(self, repo: str, folder: Path, name: str, *, body: bool) -> None:
        file = folder / name
        if "/" in name or not name or not file.is_file():
            self._refuse(404, "EntryNotFound", f"{name} does not exist on {_MAIN}")
            return
        data = file.read_bytes()
        commit = repo_commit(folder)
        if len(data) <= LFS_THRESHOLD:
            headers = {"X-Repo-Commit": commit, "ETag": f'"{_blob_id(data)}"'}
            self._send(data, headers, body=body)
            return
        sha256 = hashlib.sha256(data).hexdigest()
        self.send_response(302)
        self.send_header("Location", f"{self.hub.lfs_url}/lfs/{sha256}")
        self.send_header("X-Repo-Commit", commit)
        self.send_header("X-Linked-Etag", f'"{sha256}"')
        self.send_header("X-Linked-Size", str(len(data)))
        self.send_header("ETag", f'"{_blob_id(data)}"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _lfs(self, sha256: str, *, body: bool) -> None:
        folders = [*self.hub.repos.values(), *([self.hub.default] if self.hub.default else [])]
        for folder in folders:
            for file in folder.iterdir():
                if file.is_file() and hashlib.sha256(file.read_bytes()).hexdigest() == sha256:
                    self._send(file.read_bytes(), {"ETag": f'"{sha256}"'}, body=body)
                    return
        self._refuse(404, "EntryNotFound", f"no LFS object {sha256}")


class HubServer:
    """Serve on 127.0.0.1 from a background thread: ``with HubServer(repos) as hub: hub.url``.

    ``repos``: repository id -> folder; ``default``: the folder of every other id; ``gated``:
    repository id -> the token that opens it (its folder is ``repos[id]`` or ``default``)."""

    def __init__(
        self,
        repos: Mapping[str, Path],
        *,
        default: Path | None = None,
        gated: Mapping[str, str] | None = None,
        port: int = 0,
    ) -> None:
        gated = dict(gated or {})
        self._hub = _Hub(
            {**{r: default for r in gated if default is not None}, **repos}, default, gated
        )
        handler = type("Handler", (_Handler,), {"hub": self._hub})
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        # LFS files are redirected to another origin, as the hub redirects them to its CDN
        # (huggingface_hub reads the file's metadata from the redirect itself).
        self._lfs = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._hub.lfs_url = f"http://127.0.0.1:{self._lfs.server_address[1]}"
        self._threads = [
            threading.Thread(target=s.serve_forever, daemon=True) for s in (self._server, self._lfs)
        ]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[tuple[str, str]]:
        with self._hub.lock:
            return list(self._hub.requests)

    def __enter__(self) -> HubServer:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for server in (self._server, self._lfs):
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=10)  # hang guard


def _pairs(values: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key or not rest:
            raise SystemExit(f"hub_server: {what} {value!r} is not KEY=VALUE")
        out[key] = rest
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m srt_bench.testing.hub_server")
    parser.add_argument("--repo", action="append", default=[], help="ORG/NAME=FOLDER")
    parser.add_argument("--default", type=Path, help="folder served under every other id")
    parser.add_argument("--gated", action="append", default=[], help="ORG/NAME=TOKEN")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    repos = {k: Path(v) for k, v in _pairs(args.repo, "--repo").items()}
    server = HubServer(
        repos, default=args.default, gated=_pairs(args.gated, "--gated"), port=args.port
    )
    with server:
        print(server.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()

"""Secrets, declared once: the fields that hold credentials and the redaction every writer uses.

Pure and standard-library only: the runtime's fingerprint capture script embeds this source so a
worker container without srt redacts exactly as the CLI and the runtime do.

Three rules, applied by :func:`redact_document` (files the job writes),
:func:`redact_env_value` (an environment variable's value) and :func:`redact_text` (a text file
such as the batch script, and every line srtctl prints):

- a field of :data:`SECRET_FIELDS` (recipe and ``srtslurm.yaml`` share the ``reporting`` block) is
  replaced by a marker that says where the job takes the value from instead;
- a key or variable whose *name* says credential (:func:`is_secret_name`) has its value replaced
  (in text: ``NAME=value`` and ``--name=value``);
- a credential inside a URL is redacted in any string value (:func:`redact_url_credentials`);
- in text, every value of ``secrets`` (the secrets the writer knows) is replaced wherever it
  occurs.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "SECRET_FIELDS",
    "fill_secret_fields",
    "is_redacted",
    "is_secret_name",
    "redact_document",
    "redact_env_value",
    "redact_text",
    "redact_url_credentials",
    "restore_document",
    "secret_environment",
    "secret_field_environment",
    "secret_marker",
]

REDACTED = "<redacted>"

#: Every field that holds a credential -> the environment variable the runtime reads when the
#: field is unset. Paths are the same in a recipe and in ``srtslurm.yaml`` (``reporting:``).
SECRET_FIELDS: Mapping[tuple[str, ...], str] = {
    ("reporting", "ai_analysis", "openrouter_api_key"): "OPENROUTER_API_KEY",
    ("reporting", "ai_analysis", "gh_token"): "GH_TOKEN",
    ("reporting", "s3", "access_key_id"): "AWS_ACCESS_KEY_ID",
    ("reporting", "s3", "secret_access_key"): "AWS_SECRET_ACCESS_KEY",
}

#: Name segments that mark a credential (``HF_TOKEN``, ``DB_PASSWORD``, ``DYN_AUTH_HEADER``); a
#: whole segment must match, so ``max_tokens`` and ``DYN_TOKENIZER`` are not secrets.
_SECRET_SEGMENTS = frozenset(
    {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS", "AUTH", "APIKEY"}
)
#: Two segments in a row that mark a credential (``openrouter_api_key``, ``AWS_ACCESS_KEY_ID``).
_SECRET_PAIRS = frozenset({("API", "KEY"), ("ACCESS", "KEY"), ("PRIVATE", "KEY")})
_SEGMENT_SPLIT = re.compile(r"[^A-Za-z0-9]+")
#: ``scheme://user:password@`` - the password runs to the last ``@`` before the path.
_URL_CREDENTIALS = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@]*:)(?P<password>[^\s/?#]*)@"
)


def secret_marker(path: tuple[str, ...]) -> str:
    """What a file holds instead of the secret field at ``path`` (it says where the value is)."""
    dotted = ".".join(path)
    return f"<redacted: set {SECRET_FIELDS[path]} in the environment or {dotted} in srtslurm.yaml>"


def is_redacted(value: object) -> bool:
    """True for a value a redactor wrote (``<redacted>`` or a :func:`secret_marker`)."""
    return isinstance(value, str) and value.startswith("<redacted")


def is_secret_name(name: str) -> bool:
    """A key or variable name that says credential; ``*_env`` names hold only a variable name."""
    segments = [s for s in _SEGMENT_SPLIT.split(name.upper()) if s]
    if not segments or segments[-1] == "ENV":
        return False
    if any(s in _SECRET_SEGMENTS for s in segments):
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(segments))


def redact_url_credentials(text: str) -> str:
    """``http://u:pw@host`` -> ``http://u:<redacted>@host`` wherever a URL occurs in ``text``."""
    return _URL_CREDENTIALS.sub(lambda m: f"{m.group('head')}{REDACTED}@", text)


#: ``NAME=value`` / ``--name=value`` / ``NAME: value`` in text (a value quoted or one word).
_ASSIGNMENT = re.compile(
    r"(?P<head>(?<![A-Za-z0-9_\-])-{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)(?:=|: ))"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)"
)
#: Secret values shorter than this are not searched for in text (they would match by chance).
_MIN_SECRET = 6


def redact_text(text: str, secrets: tuple[str, ...] | frozenset[str] = ()) -> str:
    """``text`` fit to write or print: URL passwords, values assigned to a credential's name and
    every value of ``secrets`` replaced by ``<redacted>``."""
    for value in sorted((v for v in secrets if len(v) >= _MIN_SECRET), key=len, reverse=True):
        text = text.replace(value, REDACTED)
    text = redact_url_credentials(text)

    def _assignment(match: re.Match[str]) -> str:
        value = match.group("value")
        if not is_secret_name(match.group("name")) or value.strip("\"'") in ("", REDACTED):
            return match.group(0)
        if value.startswith("$") or value.startswith('"$'):
            return match.group(0)  # a reference to a variable, not a value
        return f"{match.group('head')}{REDACTED}"

    return _ASSIGNMENT.sub(_assignment, text)


def redact_env_value(name: str, value: str) -> str:
    """The value an environment variable ``name`` may be written with."""
    if is_secret_name(name) and value:
        return REDACTED
    return redact_url_credentials(value)


def _redact(node: Any, path: tuple[str, ...]) -> Any:
    if isinstance(node, dict):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            here = (*path, str(key))
            if here in SECRET_FIELDS and value is not None:
                out[key] = secret_marker(here)
            elif isinstance(key, str) and is_secret_name(key) and isinstance(value, str | int):
                out[key] = REDACTED
            else:
                out[key] = _redact(value, here)
        return out
    if isinstance(node, list | tuple):
        return [_redact(v, path) for v in node]
    if isinstance(node, str):
        return redact_url_credentials(node)
    return node


def redact_document(doc: Any) -> Any:
    """A copy of a recipe or ``srtslurm.yaml`` document fit to write: secrets replaced."""
    return _redact(doc, ())


def secret_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` a redactor would change: what must travel in a process
    environment (never a file) for :func:`restore_document` to put back."""
    return {k: v for k, v in env.items() if redact_env_value(k, v) != v}


def restore_document(node: Any, environ: Mapping[str, str]) -> Any:
    """A copy of a redacted document (a plan) with each value ``environ`` vouches for put back:
    a mapping entry ``NAME: <its redacted form>`` gets ``environ[NAME]``, and a URL whose
    password was redacted gets the URL of ``environ`` it was redacted from."""
    vouched = secret_environment(environ)
    urls = {redact_url_credentials(v): v for v in vouched.values()}
    urls = {k: v for k, v in urls.items() if k != v}
    return _restore(node, vouched, urls)


def _restore(node: Any, vouched: Mapping[str, str], urls: Mapping[str, str]) -> Any:
    if isinstance(node, dict):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            real = vouched.get(key) if isinstance(key, str) else None
            if real is not None and value == redact_env_value(key, real):
                out[key] = real
            else:
                out[key] = _restore(value, vouched, urls)
        return out
    if isinstance(node, list | tuple):
        return [_restore(v, vouched, urls) for v in node]
    if isinstance(node, str) and REDACTED in node:
        for redacted, real in urls.items():
            node = node.replace(redacted, real)
        return node
    return node


def _lookup(doc: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def secret_field_environment(doc: Any) -> dict[str, str]:
    """``{variable: value}`` for each secret field ``doc`` (a plan or recipe document) holds a
    value in: how srtctl hands a job the secrets its files hold as markers (the variable is the
    one the marker names, so the runtime reads it where the field is redacted)."""
    out: dict[str, str] = {}
    for path, variable in SECRET_FIELDS.items():
        value = _lookup(doc, path)
        if isinstance(value, str) and value and not is_redacted(value):
            out[variable] = value
    return out


def fill_secret_fields(doc: dict[str, Any], source: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of a written document whose redacted secret fields are taken from ``source`` (the
    ``srtslurm.yaml`` document) or dropped, so the reader falls back to the field's variable."""
    out: dict[str, Any] = _copy(doc)
    for path in SECRET_FIELDS:
        parent = _lookup(out, path[:-1])
        if not isinstance(parent, dict) or not is_redacted(parent.get(path[-1])):
            continue
        value = _lookup(source, path) if source is not None else None
        if isinstance(value, str) and value and not is_redacted(value):
            parent[path[-1]] = value
        else:
            del parent[path[-1]]
    return out


def _copy(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v) for v in node]
    return node

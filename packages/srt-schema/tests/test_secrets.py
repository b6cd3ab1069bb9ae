"""srt_schema.secrets: the one table of secret fields and the redactors every writer uses."""

from __future__ import annotations

import msgspec
import pytest

from srt_schema import ClusterConfig, Recipe
from srt_schema.secrets import (
    REDACTED,
    SECRET_FIELDS,
    fill_secret_fields,
    is_secret_name,
    redact_document,
    redact_env_value,
    redact_url_credentials,
    restore_document,
    secret_environment,
    secret_marker,
)

OPENROUTER = ("reporting", "ai_analysis", "openrouter_api_key")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://u:pw@host", "http://u:<redacted>@host"),
        ("http://u:pw@host:8000/x?y=1", "http://u:<redacted>@host:8000/x?y=1"),
        ("https://user:p@ss@h/p", "https://user:<redacted>@h/p"),
        ("etcd://:pw@10.0.0.1:2379", "etcd://:<redacted>@10.0.0.1:2379"),
        ("nats://a:b@h1,nats://c:d@h2", "nats://a:<redacted>@h1,nats://c:<redacted>@h2"),
        ("see http://u:pw@h and more", "see http://u:<redacted>@h and more"),
        ("http://u:@host", "http://u:<redacted>@host"),
        # nothing to redact: no password, a port, an email, no scheme
        ("http://token@github.com/x", "http://token@github.com/x"),
        ("http://host:8000/a@b", "http://host:8000/a@b"),
        ("user@example.com", "user@example.com"),
        ("u:pw@host", "u:pw@host"),
        ("", ""),
    ],
)
def test_url_credentials_are_redacted_and_nothing_else(text: str, expected: str) -> None:
    assert redact_url_credentials(text) == expected


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("HF_TOKEN", True),
        ("SRTCTL_STATUS_TOKEN", True),
        ("DYN_AUTH_HEADER", True),
        ("DB_PASSWORD", True),
        ("openrouter_api_key", True),
        ("secret_access_key", True),
        ("access_key_id", True),
        ("gh_token", True),
        ("AWS_SESSION_TOKEN", True),
        ("token_env", False),
        ("max_tokens", False),
        ("DYN_TOKENIZER", False),
        ("SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK", False),
        ("key_prefix", False),
        ("DYN_DISCOVERY_URL", False),
    ],
)
def test_secret_names_are_whole_words(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_env_values_lose_the_secret_by_name_or_url() -> None:
    assert redact_env_value("HF_TOKEN", "hf_abc") == REDACTED
    assert redact_env_value("DYN_DISCOVERY_URL", "http://u:pw@h:1") == "http://u:<redacted>@h:1"
    assert redact_env_value("NCCL_DEBUG", "INFO") == "INFO"


def test_every_secret_field_is_marked_and_says_where_the_value_goes() -> None:
    doc = {
        "name": "x",
        "environment": {"HF_TOKEN": "hf_1", "DYN_DISCOVERY_URL": "http://u:pw@h"},
        "benchmark": {"max_tokens": 128},
        "reporting": {
            "status": {"endpoint": "http://c:pw@collector:80", "token_env": "MY_TOKEN"},
            "ai_analysis": {"openrouter_api_key": "or-1", "gh_token": "gh-1"},
            "s3": {"bucket": "b", "access_key_id": "AK", "secret_access_key": "SK"},
        },
    }
    out = redact_document(doc)
    assert out == {
        "name": "x",
        "environment": {"HF_TOKEN": REDACTED, "DYN_DISCOVERY_URL": "http://u:<redacted>@h"},
        "benchmark": {"max_tokens": 128},
        "reporting": {
            "status": {"endpoint": "http://c:<redacted>@collector:80", "token_env": "MY_TOKEN"},
            "ai_analysis": {
                "openrouter_api_key": secret_marker(OPENROUTER),
                "gh_token": secret_marker(("reporting", "ai_analysis", "gh_token")),
            },
            "s3": {
                "bucket": "b",
                "access_key_id": secret_marker(("reporting", "s3", "access_key_id")),
                "secret_access_key": secret_marker(("reporting", "s3", "secret_access_key")),
            },
        },
    }
    assert doc["environment"]["HF_TOKEN"] == "hf_1"  # a copy: the input is untouched
    assert secret_marker(OPENROUTER) == (
        "<redacted: set OPENROUTER_API_KEY in the environment or "
        "reporting.ai_analysis.openrouter_api_key in srtslurm.yaml>"
    )


def _field_type(info: msgspec.inspect.Type, name: str) -> msgspec.inspect.Type:
    while isinstance(info, msgspec.inspect.UnionType):  # ``X | None``
        (info,) = [t for t in info.types if not isinstance(t, msgspec.inspect.NoneType)]
    assert isinstance(info, msgspec.inspect.StructType)
    (field,) = [f for f in info.fields if f.encode_name == name]
    return field.type


@pytest.mark.parametrize("struct", [Recipe, ClusterConfig])
@pytest.mark.parametrize("path", sorted(SECRET_FIELDS))
def test_every_table_field_is_a_string_field_of_both_files(
    struct: type[msgspec.Struct], path: tuple[str, ...]
) -> None:
    info: msgspec.inspect.Type = msgspec.inspect.type_info(struct)
    for name in path:
        info = _field_type(info, name)
    assert isinstance(info, msgspec.inspect.UnionType)
    assert {type(t) for t in info.types} == {msgspec.inspect.StrType, msgspec.inspect.NoneType}


def test_a_written_document_reads_back_with_the_cluster_file_secrets() -> None:
    written = redact_document(
        {"reporting": {"ai_analysis": {"openrouter_api_key": "or-1", "gh_token": "gh-1"}}}
    )
    cluster = {"reporting": {"ai_analysis": {"openrouter_api_key": "or-from-cluster"}}}
    assert fill_secret_fields(written, cluster) == {
        "reporting": {"ai_analysis": {"openrouter_api_key": "or-from-cluster"}}
    }
    # no cluster file: the field is dropped, so the runtime reads OPENROUTER_API_KEY
    assert fill_secret_fields(written, None) == {"reporting": {"ai_analysis": {}}}
    plain = {"reporting": {"ai_analysis": {"openrouter_api_key": "or-1"}}}
    assert fill_secret_fields(plain, cluster) == plain


def test_a_redacted_plan_gets_back_only_what_the_environment_vouches_for() -> None:
    url = "http://u:pw@h:1"
    plan = {
        "processes": [
            {
                "env": {"HF_TOKEN": "hf_1", "DYN_DISCOVERY_URL": url, "OTHER_TOKEN": "o"},
                "argv": ["bash", "-c", f"export DYN_DISCOVERY_URL={url} && run"],
            }
        ]
    }
    written = redact_document(plan)
    assert "pw" not in repr(written) and "hf_1" not in repr(written)
    environ = {"HF_TOKEN": "hf_1", "DYN_DISCOVERY_URL": url, "PATH": "/bin"}
    assert secret_environment(environ) == {"HF_TOKEN": "hf_1", "DYN_DISCOVERY_URL": url}
    restored = restore_document(written, environ)
    assert restored["processes"][0]["env"] == {
        "HF_TOKEN": "hf_1",
        "DYN_DISCOVERY_URL": url,
        "OTHER_TOKEN": REDACTED,  # the environment does not hold it: stays redacted
    }
    assert restored["processes"][0]["argv"] == plan["processes"][0]["argv"]
    # a different password in the environment does not match the redacted URL's host
    other = restore_document(written, {"DYN_DISCOVERY_URL": "http://u:x@elsewhere:1"})
    assert other["processes"][0]["env"]["DYN_DISCOVERY_URL"] == "http://u:<redacted>@h:1"

"""Issue 32 item 4: every text has a length bound, fields with a format have that format, lists
have a documented maximum (``srt_schema.text_bounds``), and a message lists allowed keys once."""

from __future__ import annotations

from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document
from srt_schema.errors import Issue
from srt_schema.errors import RecipeError as _RecipeError
from srt_schema.setpaths import OverrideSyntaxError, parse_set
from srt_schema.text_bounds import MAX_CONCURRENCY_LEVELS, MAX_ITEMS, MAX_TEXT


def _issues(doc: Any) -> list[tuple[str, str]]:
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="r.yaml")
    return [(i.path, i.message) for i in err.value.issues]


def _with(make_recipe: Any, section: str, key: str, value: Any) -> Any:
    doc = make_recipe()
    doc.setdefault(section, {})[key] = value
    return doc


PRECISION = "a short name such as fp8, bf16 or fp4 (at most 32 letters, digits, _ . + -)"
SHORT = "a short name of at most 64 letters, digits, _ . + or -"
PATH = (
    "a folder, hf:<org>/<name> or a model_paths alias of at most 4096 characters, no control "
    "characters or edge blanks"
)
IMAGE = (
    "an image reference (registry/name:tag), a .sqsh path or a containers alias of at most 1024 "
    "characters, without blanks"
)


@pytest.mark.parametrize(
    ("section", "key", "value", "message"),
    [
        (
            "model",
            "path",
            " " * 1_000_000,
            f"a text of 1000000 characters is too long; write {PATH}",
        ),
        ("model", "path", "/models/x\n", f"'/models/x\\n' is not allowed here; write {PATH}"),
        ("model", "path", " /models/x", f"' /models/x' is not allowed here; write {PATH}"),
        (
            "model",
            "container",
            "x" * 100_000,
            f"a text of 100000 characters is too long; write {IMAGE}",
        ),
        ("model", "container", "a b", f"'a b' is not allowed here; write {IMAGE}"),
        ("model", "precision", "🙂", f"'🙂' is not allowed here; write {PRECISION}"),
        (
            "resources",
            "gpu_type",
            "x" * 100_000,
            f"a text of 100000 characters is too long; write {SHORT}",
        ),
        ("slurm", "partition", "a;b", f"'a;b' is not allowed here; write {SHORT}"),
        (
            "benchmark",
            "concurrencies",
            [1] * 20_000,
            f"a list of 20000 entries is too long; write at most {MAX_CONCURRENCY_LEVELS}",
        ),
        (
            "benchmark",
            "concurrencies",
            "x".join(["1"] * 5_000),
            f"5000 concurrency levels is too many; write at most {MAX_CONCURRENCY_LEVELS} (each "
            "level is one benchmark run)",
        ),
    ],
    ids=[
        "path-spaces",
        "path-newline",
        "path-edge-blank",
        "container-long",
        "container-blank",
        "precision-emoji",
        "gpu-type-long",
        "partition-shell",
        "concurrencies-list",
        "concurrencies-text",
    ],
)
def test_a_bounded_field_is_refused_at_its_path(
    make_recipe: Any, section: str, key: str, value: Any, message: str
) -> None:
    assert _issues(_with(make_recipe, section, key, value)) == [(f"$.{section}.{key}", message)]


def test_any_other_text_and_free_form_values_are_bounded(make_recipe: Any) -> None:
    doc = make_recipe()
    doc["environment"] = {"LONG": "y" * (MAX_TEXT + 1)}
    assert _issues(doc) == [
        (
            "$.environment.LONG",
            f"a text of {MAX_TEXT + 1} characters is too long; write at most {MAX_TEXT} characters",
        )
    ]
    doc = make_recipe()
    doc["roles"]["agg"]["args"] = {"flag": list(range(MAX_ITEMS + 1))}
    assert _issues(doc) == [
        (
            "$.roles.agg.args.flag",
            f"a list of {MAX_ITEMS + 1} entries is too long; write at most {MAX_ITEMS}",
        )
    ]


def test_values_in_bounds_still_load(make_recipe: Any) -> None:
    doc = make_recipe()
    doc["model"].update(precision="NVFP4", path="hf:org/name")
    doc["resources"]["gpu_type"] = "gb200"
    doc["slurm"] = {"partition": "batch", "account": "coreai_comparch_x"}
    doc["benchmark"]["concurrencies"] = list(range(1, MAX_CONCURRENCY_LEVELS + 1))
    assert load_recipe_document(doc, file="r.yaml")


def test_the_allowed_keys_are_listed_once_per_message(make_recipe: Any) -> None:
    doc = make_recipe()
    for i in range(100):
        doc["benchmark"][f"bogus{i}"] = 1
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="r.yaml")
    text = str(err.value)
    assert text.count("allowed here: type,") == 1
    assert text.count("allowed here: as listed above") == 49
    assert text.endswith("... and 50 more issues")
    assert len(text) < 8192, len(text)
    # the issues themselves (--json) keep their whole message
    assert all("allowed here: type," in i.message for i in err.value.issues)


def test_a_message_of_many_issues_is_cut_with_a_count() -> None:
    issues = [Issue(file="f", path=f"$.k{i}", message="m") for i in range(60)]
    assert str(_RecipeError(issues)).splitlines()[-1] == "... and 10 more issues"


def test_a_set_value_longer_than_a_document_is_refused() -> None:
    """(argv holds at most 128 KiB per argument on Linux, so this is the library's bound.)"""
    with pytest.raises(OverrideSyntaxError, match="longer than a whole recipe may be"):
        parse_set("name=" + "x" * (4 * 1024 * 1024 + 1))


def test_a_status_url_with_credentials_is_refused_with_what_to_do(make_recipe: Any) -> None:
    """Issue 32 item 2: the runtime would send the redacted password; the message does not echo
    the password either."""
    for key, value, path in (
        ("endpoint", "http://user:canary-pw@127.0.0.1:9/", "$.reporting.status.endpoint"),
        ("endpoints", ["http://ok:9/", "http://user@h:9/"], "$.reporting.status.endpoints[1]"),
    ):
        doc = make_recipe(reporting={"status": {key: value}})
        ((where, message),) = _issues(doc)
        assert where == path
        assert message.startswith("'http://<credentials>@")
        assert "holds credentials" in message and "SRTCTL_STATUS_TOKEN" in message
        assert "canary-pw" not in message


def test_a_credential_in_free_text_is_refused_and_shown_redacted(make_recipe: Any) -> None:
    """(Issue 32 item 1: every file srt writes holds it redacted, so the job would get
    ``<redacted>``.) Environment mappings carry secrets properly and are not checked."""
    doc = make_recipe(
        setup_script="export HF_TOKEN=hf_canary123 && run",
        environment={"HF_TOKEN": "hf_canary123", "URL": "http://u:pw123456@h/"},
    )
    doc["host_setup"] = {"commands": ["run --port=1", "login --api-key=sk-canary-1"]}
    issues = _issues(doc)
    assert [path for path, _ in issues] == ["$.setup_script", "$.host_setup.commands[1]"]
    assert issues[0][1].startswith(
        "'export HF_TOKEN=<redacted> && run' holds a credential (shown <redacted>)"
    )
    assert "write $NAME here instead" in issues[0][1]
    assert all("canary" not in message for _, message in issues)


def test_a_credential_in_srtslurm_text_is_refused() -> None:
    from srt_schema.clusterconfig import parse_cluster_config
    from srt_schema.errors import ClusterConfigError

    with pytest.raises(ClusterConfigError) as err:
        parse_cluster_config(
            "default_bash_preamble: export HF_TOKEN=hf_canary123\n"
            "default_sbatch_directives: {comment: 'http://u:pw123456@h/'}\n",
            file="srtslurm.yaml",
        )
    assert [i.path for i in err.value.issues] == ["$.default_bash_preamble"]
    # a reference to a variable is what to write instead
    assert parse_cluster_config("default_bash_preamble: export HF_TOKEN=$HF_TOKEN\n", file="s")


@pytest.mark.parametrize(
    ("section", "key", "value", "wanted"),
    [
        ("output", "log_dir", "logs/\n#x", "a path of at most 4096 characters"),
        ("frontend", "nginx_container", "nginx 1.27", "an image reference"),
    ],
)
def test_other_paths_and_images_have_their_format(
    make_recipe: Any, section: str, key: str, value: str, wanted: str
) -> None:
    ((path, message),) = _issues(_with(make_recipe, section, key, value))
    assert path == f"$.{section}.{key}"
    assert f"is not allowed here; write {wanted}" in message

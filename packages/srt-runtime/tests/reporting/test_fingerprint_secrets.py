"""The fingerprint capture script redacts with srt_schema.secrets, also where srt is absent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from srt_runtime.reporting.fingerprint import REDACTED, capture_script, redact_env

PASSWORD = "canary-url-pw-4471"


def test_url_passwords_are_redacted_in_any_captured_value() -> None:
    env = {
        "DYN_DISCOVERY_URL": f"http://u:{PASSWORD}@127.0.0.1:1",
        "NCCL_SOCKET_IFNAME": "eth0",
        "HF_TOKEN": "hf-secret-value",
        "HF_ENDPOINT": "https://mirror/hf-secret-value/",
        "DYN_TOKENIZER": "fast",
    }
    assert redact_env(env) == {
        "DYN_DISCOVERY_URL": "http://u:<redacted>@127.0.0.1:1",
        "DYN_TOKENIZER": "fast",
        "HF_ENDPOINT": REDACTED,
        "HF_TOKEN": REDACTED,
        "NCCL_SOCKET_IFNAME": "eth0",
    }


def test_the_capture_script_redacts_without_srt_installed(tmp_path: Path) -> None:
    script = tmp_path / "capture.py"
    script.write_text(capture_script())
    out = tmp_path / "fingerprint_agg_w0.json"
    env = {
        "PATH": "/usr/bin:/bin",
        "DYN_DISCOVERY_URL": f"http://u:{PASSWORD}@127.0.0.1:1",
        "DYN_AUTH_HEADER": "canary-auth",
    }
    # -S: no site-packages, so srt_schema cannot be imported (as in a worker container)
    probe = [sys.executable, "-I", "-S", "-c", "import srt_schema"]
    assert subprocess.run(probe, capture_output=True, check=False, timeout=30).returncode != 0
    subprocess.run(
        [sys.executable, "-I", "-S", str(script), str(out)], env=env, check=True, timeout=60
    )
    text = out.read_text()
    assert PASSWORD not in text
    assert json.loads(text)["env"] == {
        "DYN_AUTH_HEADER": REDACTED,
        "DYN_DISCOVERY_URL": "http://u:<redacted>@127.0.0.1:1",
    }

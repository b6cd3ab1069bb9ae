"""A test-made Dynamo-like source tree for the Dynamo install tests (srt_planner.dynamo_install):
a git repository holding a tiny Python package (``srt_demo_pkg``, never ``dynamo``, so it cannot
shadow the Dynamo the jobs run) built by an in-tree PEP 517 backend that needs nothing from the
network, a ``feature`` branch, a patch that adds a symbol, and wheels named like Dynamo's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from srt_planner.dynamo_install import DYNAMO_GIT_URL


def offline_env(tmp_path: Path, path: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(UV_OFFLINE="1", PIP_NO_INDEX="1", TMPDIR=str(tmp_path))
    if path is not None:
        env["PATH"] = path
    return env


#: A PEP 517 backend with no requirements: zips the package folder into a wheel.
BACKEND = """\
import base64, hashlib, os, zipfile

NAME, DIST, VERSION, REQUIRES = {name!r}, {dist!r}, {version!r}, {requires!r}
STEM = DIST.replace("-", "_")


def _record(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{{path}},sha256={{digest}},{{len(data)}}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.exists(os.path.join(here, "BROKEN")):
        raise RuntimeError("srt-test: this tree does not build (BROKEN)")
    info = f"{{STEM}}-{{VERSION}}.dist-info"
    files = {{}}
    for root, _, names in os.walk(os.path.join(here, NAME)):
        for name in sorted(names):
            path = os.path.join(root, name)
            with open(path, "rb") as handle:
                files[os.path.relpath(path, here).replace(os.sep, "/")] = handle.read()
    meta = f"Metadata-Version: 2.1\\nName: {{DIST}}\\nVersion: {{VERSION}}\\n"
    meta += "".join(f"Requires-Dist: {{r}}\\n" for r in REQUIRES)
    files[f"{{info}}/METADATA"] = meta.encode()
    files[f"{{info}}/WHEEL"] = (
        b"Wheel-Version: 1.0\\nGenerator: srt-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    )
    lines = [_record(p, d) for p, d in files.items()] + [f"{{info}}/RECORD,,"]
    files[f"{{info}}/RECORD"] = ("\\n".join(lines) + "\\n").encode()
    wheel = f"{{STEM}}-{{VERSION}}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel
"""

PACKAGE = "srt_demo_pkg"
RUNTIME = "srt_demo_runtime"

#: Adds ``PATCHED`` to the package (made against the ``feature`` branch).
PATCH = """\
--- a/srt_demo_pkg/__init__.py
+++ b/srt_demo_pkg/__init__.py
@@ -1 +1,2 @@
 VALUE = "feature"
+PATCHED = "patched"
"""

#: A patch whose context is not in the tree.
BAD_PATCH = """\
--- a/srt_demo_pkg/__init__.py
+++ b/srt_demo_pkg/__init__.py
@@ -1 +1,2 @@
 VALUE = "something else"
+PATCHED = "never"
"""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=srt", "-c", "user.email=srt@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def project(
    folder: Path, name: str, dist: str, requires: tuple[str, ...] = (), version: str = "0.1.0"
) -> None:
    (folder / "_build").mkdir(parents=True, exist_ok=True)
    (folder / "_build" / "srt_test_backend.py").write_text(
        BACKEND.format(name=name, dist=dist, version=version, requires=list(requires))
    )
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "srt_test_backend"\n'
        'backend-path = ["_build"]\n\n'
        f'[project]\nname = "{dist}"\nversion = "{version}"\n'
    )


def make_wheels(tmp_path: Path, version: str) -> Path:
    """Wheels named like Dynamo's two distributions (their modules are not ``dynamo``)."""
    out = tmp_path / "wheelhouse"
    for dist in ("ai-dynamo", "ai-dynamo-runtime"):
        module = "srt_fake_" + dist.replace("-", "_")
        folder = tmp_path / "wheel-src" / dist
        project(folder, module, dist, version=version)
        (folder / module).mkdir()
        (folder / module / "__init__.py").write_text(f"DIST = {dist!r}\n")
        subprocess.run(
            ["uv", "build", "--python", sys.executable, "--wheel", "--out-dir", str(out)],
            cwd=folder,
            env=offline_env(tmp_path),
            capture_output=True,
            check=True,
            timeout=120,
        )
    return out


def upstream(env: dict[str, str], repo: Path) -> dict[str, str]:
    """git fetches the upstream Dynamo repository from ``repo`` (``url.<base>.insteadOf``)."""
    return {
        **env,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.{repo}.insteadOf",
        "GIT_CONFIG_VALUE_0": DYNAMO_GIT_URL,
    }


def make_repository(tmp_path: Path, *, bindings: bool = False, broken: bool = False) -> Path:
    """A repository whose ``trunk`` has the package and whose ``feature`` branch changes it."""
    work = tmp_path / "dynamo-src"
    work.mkdir()
    git(work, "init", "--quiet", "--initial-branch=trunk")
    requires: tuple[str, ...] = ()
    if bindings:
        runtime = work / "lib" / "bindings" / "python"
        project(runtime, RUNTIME, "srt-demo-runtime")
        (runtime / RUNTIME).mkdir()
        (runtime / RUNTIME / "__init__.py").write_text('RUST = "bindings"\n')
        requires = ("srt-demo-runtime==0.1.0",)
    project(work, PACKAGE, "srt-demo-pkg", requires)
    (work / PACKAGE).mkdir()
    (work / PACKAGE / "__init__.py").write_text('VALUE = "trunk"\n')
    if broken:
        (work / "BROKEN").write_text("x\n")
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "trunk")
    git(work, "checkout", "--quiet", "-b", "feature")
    (work / PACKAGE / "__init__.py").write_text('VALUE = "feature"\n')
    git(work, "commit", "--quiet", "-am", "feature")
    git(work, "checkout", "--quiet", "trunk")
    return work

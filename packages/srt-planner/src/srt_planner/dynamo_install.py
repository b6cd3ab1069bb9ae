"""Installing Dynamo into the steps that run it (``dynamo.install``, ``dynamo.top_of_tree``,
``dynamo.source``; docs/planner.md#dynamo-install).

Every worker step and Dynamo frontend step runs ``srt_dynamo_install.sh <node>`` (a file of the
plan, written into the log directory) before its program. The script installs what the recipe
names, once per container and node: a lock file in the job-owned folder
``<log_dir>/dynamo_install/<node>/`` serialises the steps of a node, and a sentinel holding the
source's key makes later steps (and co-located MPI ranks) skip. It logs to
``<log_dir>/dynamo_install_<node>.log``; on failure it prints the log's tail and one line naming
the cause to stderr and exits 1, so the step fails before its program starts and the job's
diagnosis shows the build log. It records what it installed in
``<log_dir>/dynamo_install_<node>.json`` (source kind, resolved commit, each patch's path and
sha256, installed versions); the runtime copies those records into ``recipe.lock.yaml``.

Sources:

- ``source.pypi`` (or no source: ``DEFAULT_DYNAMO_VERSION``): ``ai-dynamo-runtime`` and
  ``ai-dynamo`` of that version, from PyPI with the NVIDIA index as an extra.
- ``source.wheel``: a path ending in ``.whl`` is that wheel file; any other value is a nightly
  version of both distributions (pre-releases allowed).
- ``source.git`` + ``rev`` (``rev`` alone: the upstream repository) and ``top_of_tree`` (the
  upstream default branch's head): a clone into ``<log_dir>/dynamo_install/<node>/src`` at the
  pinned ``sha`` (or ``rev`` by name when ``srtctl apply`` could not pin it; the checkout is
  verified against the sha), then every ``patches`` entry in order with ``git apply`` (a patch
  that does not apply fails the install with its name), then the build: the Rust runtime
  bindings (``lib/bindings/python``, a maturin project; cargo must be on PATH, checked first)
  into a wheel, and the tree root installed together with that wheel.

Patch and wheel paths: absolute, or relative to the configs folder (``/configs`` in containers;
off-container ``<srtctl_root>/configs``, else ``configs/`` of the directory the step starts in),
falling back to its ``patches/`` subfolder, as ``setup_script`` does.

Where it installs (the decision of issue 18): in a container (container runtime ``pyxis``) into
the container's interpreter, which the container owns. Outside containers (container runtime
``none``: the local launcher, hosts where the engines are installed natively) an explicit source
never touches the interpreter srt runs from: it is installed with ``--target`` into the job-owned
folder ``<log_dir>/dynamo_install/<node>/site`` and the Dynamo steps alone get that folder first
on ``PYTHONPATH``; with no ``source`` nothing is installed off-container (the host's Dynamo runs,
as before), and stand-in plans (which run on the host) install nothing either. A pyxis plan whose
steps do not see the log directory at ``/logs`` (slurm-lab's pyxis stub runs steps on the host)
fails the step with a message instead of installing into the host's interpreter.

Over 400 lines because about 250 of them are the script's fixed body (one string, kept beside
the function that renders its settings so the two cannot drift apart).
"""

from __future__ import annotations

import shlex
from typing import Literal, assert_never

import msgspec

from srt_planner.context import DEFAULT_DYNAMO_VERSION, PlanContext
from srt_planner.plan import GeneratedFile
from srt_schema.recipe import Recipe

__all__ = [
    "DYNAMO_GIT_URL",
    "INSTALL_SCRIPT",
    "NVIDIA_INDEX",
    "DynamoInstall",
    "GitSource",
    "InstallSource",
    "PypiSource",
    "TopOfTreeSource",
    "WheelFile",
    "WheelVersion",
    "install_files",
    "install_preamble",
    "install_source_of",
    "plan_dynamo_install",
    "render_install_script",
    "site_dir",
]

#: Where the plan writes the install script (relative to the log directory).
INSTALL_SCRIPT = "srt_dynamo_install.sh"
#: The repository a ``dynamo.source`` with only ``rev`` (and ``top_of_tree``) installs from.
DYNAMO_GIT_URL = "https://github.com/ai-dynamo/dynamo.git"
#: The extra package index of the Dynamo releases and nightlies.
NVIDIA_INDEX = "https://pypi.nvidia.com"
#: Bound on each git network command (the service clone step's, the reference's ``timeout 600s``).
GIT_TIMEOUT_SECONDS = 600
#: Log lines shown on stderr when the install fails.
TAIL_LINES = 40

InstallMode = Literal["container", "prefix"]


class PypiSource(msgspec.Struct, frozen=True, kw_only=True):
    version: str


class WheelFile(msgspec.Struct, frozen=True, kw_only=True):
    #: As written in the recipe (resolved by the script against the configs folder).
    path: str


class WheelVersion(msgspec.Struct, frozen=True, kw_only=True):
    version: str


class GitSource(msgspec.Struct, frozen=True, kw_only=True):
    repo: str
    rev: str
    sha: str | None = None
    patches: tuple[str, ...] = ()


class TopOfTreeSource(msgspec.Struct, frozen=True, kw_only=True):
    repo: str


InstallSource = PypiSource | WheelFile | WheelVersion | GitSource | TopOfTreeSource


class DynamoInstall(msgspec.Struct, frozen=True, kw_only=True):
    """What the steps of a plan install, and where."""

    source: InstallSource
    mode: InstallMode


def install_source_of(recipe: Recipe) -> InstallSource:
    """The recipe's Dynamo source as one variant (validation made ``dynamo.source`` coherent)."""
    dynamo = recipe.dynamo
    src = dynamo.source
    if dynamo.top_of_tree:
        return TopOfTreeSource(repo=DYNAMO_GIT_URL)
    if src is not None and src.wheel:
        if src.wheel.endswith(".whl"):
            return WheelFile(path=src.wheel)
        return WheelVersion(version=src.wheel)
    if src is not None and (src.git or src.rev):
        return GitSource(
            repo=src.git or DYNAMO_GIT_URL,
            rev=src.rev or "HEAD",
            sha=src.sha.lower() if src.sha else None,
            patches=tuple(src.patches or ()),
        )
    version = (src.pypi if src is not None else None) or DEFAULT_DYNAMO_VERSION
    return PypiSource(version=version)


def plan_dynamo_install(ctx: PlanContext) -> DynamoInstall | None:
    """Whether the plan's Dynamo steps install Dynamo, what and where (module docstring)."""
    dynamo = ctx.recipe.dynamo
    if not (ctx.dynamo_workers and dynamo.install):
        return None
    if ctx.pyxis:
        return DynamoInstall(source=install_source_of(ctx.recipe), mode="container")
    if ctx.stand_in is not None or (dynamo.source is None and not dynamo.top_of_tree):
        return None
    return DynamoInstall(source=install_source_of(ctx.recipe), mode="prefix")


def site_dir(ctx: PlanContext, node: str) -> str:
    """The job-owned folder an off-container install goes to (``--target``)."""
    return f"{ctx.in_log_dir}/dynamo_install/{node}/site"


def install_preamble(ctx: PlanContext, node: str) -> tuple[str, ...]:
    """The preamble lines of a Dynamo step on ``node``: run the script (and, off-container, put
    the job-owned install first on ``PYTHONPATH``)."""
    install = plan_dynamo_install(ctx)
    if install is None:
        return ()
    script = f"{ctx.in_log_dir}/{INSTALL_SCRIPT}"
    run = f"bash {shlex.quote(script)} {shlex.quote(node)}"
    if install.mode == "container":
        missing = (
            f"srt: dynamo install: {script} not found: this step does not see the log directory "
            "of the job at /logs (is it running in a container?); nothing was installed. Set "
            "dynamo.install: false when the image has Dynamo, or use container_runtime: none"
        )
        return (
            f"{{ [ -f {shlex.quote(script)} ] || "
            f"{{ echo {shlex.quote(missing)} >&2; exit 1; }}; }}",
            run,
        )
    site = shlex.quote(site_dir(ctx, node))
    return (run, f'export PYTHONPATH={site}"${{PYTHONPATH:+:$PYTHONPATH}}"')


def install_files(ctx: PlanContext) -> tuple[GeneratedFile, ...]:
    """The install script, when the plan installs Dynamo."""
    install = plan_dynamo_install(ctx)
    if install is None:
        return ()
    return (
        GeneratedFile(path=INSTALL_SCRIPT, content=render_install_script(ctx, install), mode=0o755),
    )


def _array(values: tuple[str, ...] | list[str]) -> str:
    return "(" + " ".join(shlex.quote(v) for v in values) + ")"


def _configs_dir(ctx: PlanContext, mode: InstallMode) -> str:
    if mode == "container":
        return "/configs"
    root = ctx.cluster.srtctl_root
    return f"{root.rstrip('/')}/configs" if root else "configs"


def _settings(ctx: PlanContext, install: DynamoInstall) -> dict[str, str]:
    """The script's shell variables (values already shell words)."""
    values: dict[str, str] = {
        "mode": shlex.quote(install.mode),
        "py": shlex.quote(ctx.python),
        "log_dir": shlex.quote(ctx.in_log_dir),
        "configs": shlex.quote(_configs_dir(ctx, install.mode)),
        "repo": "''",
        "want": "''",
        "pinned": "0",
        "pre": "0",
        "patches": "()",
        "requirements": "()",
        "wheel_file": "''",
        "dists": "()",
    }
    match install.source:
        case PypiSource(version=version) | WheelVersion(version=version):
            kind = "pypi" if isinstance(install.source, PypiSource) else "wheel"
            values["requirements"] = _array(
                [f"ai-dynamo-runtime=={version}", f"ai-dynamo=={version}"]
            )
            # The last name is the one whose version the record reports.
            values["dists"] = _array(["ai-dynamo-runtime", "ai-dynamo"])
            values["pre"] = "1" if kind == "wheel" else "0"
            key = f"{kind} {version}"
        case WheelFile(path=path):
            kind = "wheel"
            values["wheel_file"] = shlex.quote(path)
            key = f"wheel {path}"
        case GitSource(repo=repo, rev=rev, sha=sha, patches=patches):
            kind = "git"
            values["repo"] = shlex.quote(repo)
            values["want"] = shlex.quote(sha or rev)
            values["pinned"] = "1" if sha else "0"
            values["patches"] = _array(patches)
            key = " ".join(["git", f"{repo}@{sha or rev}", *patches])
        case TopOfTreeSource(repo=repo):
            kind = "top_of_tree"
            values["repo"] = shlex.quote(repo)
            values["want"] = "HEAD"
            key = f"top_of_tree {repo}"
        case _:
            assert_never(install.source)
    values["kind"] = kind
    values["key"] = shlex.quote(key)
    return values


def render_install_script(ctx: PlanContext, install: DynamoInstall) -> str:
    """The install script of the plan (deterministic: the settings, then a fixed body)."""
    settings = _settings(ctx, install)
    head = [
        "#!/usr/bin/env bash",
        "# Dynamo install of this job, rendered by srt_planner.dynamo_install (do not edit).",
        "set -o pipefail",
        "node=${1:?usage: srt_dynamo_install.sh NODE}",
        *(f"{name}={settings[name]}" for name in sorted(settings)),
        f"git_timeout={GIT_TIMEOUT_SECONDS}",
        f"tail_lines={TAIL_LINES}",
        f"nvidia_index={shlex.quote(NVIDIA_INDEX)}",
    ]
    return "\n".join(head) + "\n" + _BODY


#: The fixed part of the script (the settings above it are its only inputs).
_BODY = r"""
# In a container the node is the one the step runs on (an MPI step spans several).
if [ "$mode" = container ]; then node="${SLURMD_NODENAME:-$node}"; fi
# Relative folders are relative to where the step starts; the build changes directory.
case "$log_dir" in /*) ;; *) log_dir="$PWD/$log_dir" ;; esac
case "$configs" in /*) ;; *) configs="$PWD/$configs" ;; esac
work="$log_dir/dynamo_install/$node"
log="$log_dir/dynamo_install_$node.log"
record="$log_dir/dynamo_install_$node.json"
site=''
if [ "$mode" = prefix ]; then site="$work/site"; fi
export GIT_TERMINAL_PROMPT=0

say() { echo "srt: dynamo install on $node: $*" >>"$log"; }
fail() {
    {
        echo "---- last $tail_lines lines of $log ----"
        tail -n "$tail_lines" "$log" 2>/dev/null
        echo "----"
        echo "srt: dynamo install on $node failed: $1 (log: $log)"
    } >&2
    exit 1
}
run() { "$@" >>"$log" 2>&1; }

if ! { mkdir -p "$work" && : >>"$log"; }; then
    echo "srt: dynamo install on $node: cannot create $work and $log" >&2
    exit 1
fi
# Once per container (a sentinel in the interpreter's prefix, as the steps of one image on one
# node may share it) or per node (the job-owned install folder).
if [ "$mode" = container ]; then
    prefix=$("$py" -c 'import sys; print(sys.prefix)' 2>/dev/null || echo "${HOME:-/root}")
    done_file="$prefix/.srt_dynamo_install.complete"
    lock_file="$prefix/.srt_dynamo_install.lock"
else
    done_file="$work/complete"
    lock_file="$work/lock"
fi
exec 9>"$lock_file" || fail "cannot open $lock_file"
flock -x 9 || fail "cannot lock $lock_file"
if [ -f "$done_file" ] && [ "$(cat "$done_file")" = "$key" ]; then
    say "already installed ($key)"
    exit 0
fi
say "installing $key ($mode mode${site:+, into $site})"

# A path as the recipe wrote it: absolute, or relative to the configs folder (or its patches/).
resolve() {
    case "$1" in /*) echo "$1"; return ;; esac
    if [ -e "$configs/$1" ] || [ ! -e "$configs/patches/$1" ]; then echo "$configs/$1"
    else echo "$configs/patches/$1"; fi
}

# The installer: the interpreter's pip, else uv (virtual environments made by uv have no pip).
if "$py" -m pip --version >/dev/null 2>&1; then
    installer=("$py" -m pip install --no-input)
    builder=("$py" -m pip wheel --no-deps --no-input --wheel-dir)
    pre_args=(--pre)
elif command -v uv >/dev/null 2>&1; then
    installer=(uv pip install --python "$py")
    builder=(uv build --python "$py" --wheel --out-dir)
    pre_args=(--prerelease allow)
else
    fail "neither '$py -m pip' nor uv is available to install Dynamo with"
fi
if [ "$mode" = container ]; then installer+=(--break-system-packages)
else installer+=(--target "$site"); fi

commit=''
src=''
projects=()
targets=()
case "$kind" in
pypi|wheel)
    if [ -n "$wheel_file" ]; then
        wheel_path=$(resolve "$wheel_file")
        [ -f "$wheel_path" ] || fail "wheel $wheel_file not found (looked at $wheel_path)"
        targets=("$wheel_path")
        dist=$(basename "$wheel_path")
        dists=("${dist%%-*}")
    else
        targets=("${requirements[@]}")
        installer+=(--extra-index-url "$nvidia_index")
        if [ "$pre" = 1 ]; then installer+=("${pre_args[@]}"); fi
    fi
    ;;
git|top_of_tree)
    # The checkout is the job's own, outside the log folder (a Rust build is gigabytes); it is
    # removed once installed and kept when the install fails.
    src=$(mktemp -d "${TMPDIR:-/tmp}/srt_dynamo_src.XXXXXX") \
        || fail "cannot create a checkout folder"
    git_net=(timeout --foreground "$git_timeout" git -c http.version=HTTP/1.1)
    say "fetching $repo at $want into $src"
    run "${git_net[@]}" clone --quiet --no-checkout -- "$repo" "$src" \
        || fail "git clone of $repo failed"
    cd "$src" || fail "no checkout at $src"
    # By commit where the server allows it, else the clone's own refs (a branch or tag name).
    ref="$want"
    if run "${git_net[@]}" fetch --quiet origin -- "$want"; then ref=FETCH_HEAD; fi
    run git -c advice.detachedHead=false checkout --quiet --detach "$ref" \
        || fail "commit $want is not in $repo"
    commit=$(git rev-parse HEAD) || fail "git rev-parse failed in $src"
    if [ "$pinned" = 1 ]; then
        case "$commit" in
        "$want"*) ;;
        *) fail "checked out $commit, not the pinned sha $want" ;;
        esac
    fi
    say "checked out $commit"
    for patch in "${patches[@]}"; do
        path=$(resolve "$patch")
        [ -f "$path" ] || fail "patch $patch not found (looked at $path)"
        run git apply --check "$path" || fail "patch $patch does not apply to $repo at $commit"
        run git apply "$path" || fail "patch $patch does not apply to $repo at $commit"
        say "applied patch $patch ($path)"
    done
    if [ ! -f pyproject.toml ] && [ ! -f setup.py ]; then
        fail "$repo at $commit has no pyproject.toml (or setup.py) at its root"
    fi
    bindings="$src/lib/bindings/python"
    if [ -f "$bindings/pyproject.toml" ]; then
        command -v cargo >/dev/null 2>&1 || fail "$repo at $commit has the Rust runtime bindings \
(lib/bindings/python, a maturin project), which need cargo to build, and cargo is not on PATH; \
use an image with a Rust toolchain, or install a release (dynamo.source.pypi or wheel)"
        export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-cpu=native --cfg tokio_unstable"
        say "building the runtime bindings in $bindings"
        run "${builder[@]}" "$src/.srt_wheels" "$bindings" \
            || fail "building the Rust runtime bindings (lib/bindings/python) failed"
        for wheel in "$src"/.srt_wheels/*.whl; do
            if [ -f "$wheel" ]; then targets+=("$wheel"); fi
        done
        projects+=("$bindings")
    fi
    # The root installs together with the bindings' wheel, which satisfies its dependency.
    targets+=("$src")
    projects+=("$src")
    ;;
*)
    fail "unknown source kind $kind"
    ;;
esac

say "running ${installer[*]} ${targets[*]}"
run "${installer[@]}" "${targets[@]}" || fail "installing $key failed"

export SRT_DYN_RECORD="$record" SRT_DYN_NODE="$node" SRT_DYN_KIND="$kind" SRT_DYN_MODE="$mode" \
    SRT_DYN_REPO="$repo" SRT_DYN_WANT="$want" SRT_DYN_COMMIT="$commit" SRT_DYN_SITE="$site" \
    SRT_DYN_LOG="$log" SRT_DYN_CONFIGS="$configs" SRT_DYN_KEY="$key"
record_args=("${#patches[@]}" "${patches[@]}" "${#dists[@]}" "${dists[@]}" "${projects[@]}")
if ! run "$py" - "${record_args[@]}" <<'PY'
import hashlib, json, os, re, sys
from importlib import metadata

env = os.environ
args = sys.argv[1:]
count = int(args[0])
patches, args = args[1 : 1 + count], args[1 + count :]
count = int(args[0])
dists, projects = args[1 : 1 + count], args[1 + count :]
if env["SRT_DYN_SITE"]:
    sys.path.insert(0, env["SRT_DYN_SITE"])


def resolve(path):
    if os.path.isabs(path):
        return path
    configs = env["SRT_DYN_CONFIGS"]
    first, second = os.path.join(configs, path), os.path.join(configs, "patches", path)
    return first if os.path.exists(first) or not os.path.exists(second) else second


def sha256(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def project_name(folder):
    try:
        with open(os.path.join(folder, "pyproject.toml"), encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        found = re.search(r'^\[project\][^\[]*?^name\s*=\s*"([^"]+)"', text, re.M | re.S)
        return found.group(1) if found else None
    return tomllib.loads(text).get("project", {}).get("name")


def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


names = dists + [name for name in map(project_name, projects) if name]
installed = {name: version(name) for name in names}
record = {
    "node": env["SRT_DYN_NODE"],
    "kind": env["SRT_DYN_KIND"],
    "mode": env["SRT_DYN_MODE"],
    "source": env["SRT_DYN_KEY"],
    "repo": env["SRT_DYN_REPO"] or None,
    "rev": env["SRT_DYN_WANT"] or None,
    "commit": env["SRT_DYN_COMMIT"] or None,
    "patches": [{"path": p, "resolved": resolve(p), "sha256": sha256(resolve(p))} for p in patches],
    "installed": installed,
    # The root project's version (the wheel's, or ai-dynamo's).
    "version": installed[names[-1]] if names else None,
    "target": env["SRT_DYN_SITE"] or sys.prefix,
    "log": env["SRT_DYN_LOG"],
}
partial = env["SRT_DYN_RECORD"] + ".partial"
with open(partial, "w", encoding="utf-8") as out:
    json.dump(record, out, indent=2, sort_keys=True)
    out.write("\n")
os.replace(partial, env["SRT_DYN_RECORD"])
print("recorded", json.dumps(record, sort_keys=True))
PY
then
    fail "cannot write the install record $record"
fi
printf '%s' "$key" >"$done_file" || fail "cannot write $done_file"
if [ -n "$src" ]; then cd / && rm -rf "$src"; fi
say "installed $key"
"""

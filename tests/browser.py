"""Our HTML pages in a real browser: headless Chromium (Debian's `chromium`) renders a page, the
test reads the DOM it built and checks what a person would see.

One call per page (the `browser` fixture of tests/conftest.py gives a `Browser`):

    page = browser.render(job_dir / "logs" / "perf_dashboard.html", name="dashboard",
                          save_to=job_dir / "screenshots")
    assert page.problems(charts=["Throughput vs latency"], tables=["#latency"]) == []

`render` takes a file or an `http://127.0.0.1:...` URL (a page a test serves, such as the status
collector's UI). For each width in `WIDTHS` (1400 px, and a 1280 px laptop screen) it:

- loads the page with a probe script added before `</body>` (files only: a copy in the harness's
  own folder; the page itself is never changed) that records, in CSS pixels as laid out, every
  pair of SVG texts of one chart whose boxes overlap, every SVG text that sticks out of its
  chart, and whether the document is wider than the window (a horizontal scroll bar);
- dumps the DOM (`--dump-dom`; for URLs after `--virtual-time-budget` so that scripts finish);
- saves a screenshot of the whole page height (`<save_to>/<name>-<width>.png`).

`Page.problems(...)` lists, in words, what is wrong: an expected chart (an `<svg>` whose
`aria-label` contains the given text) missing or drawn without data (no line, point or bar); an
expected table (`#id`, or a table whose header has the text) missing or without a data row;
overlapping or clipped chart labels; a page wider than the window; anything loaded from the
network (`src`/`href` to http(s) other than `http://127.0.0.1`/`localhost`). An empty list is a
good page.

Chromium never reaches the network: names resolve to nothing except localhost, and the
background services (updates, sync, metrics) are off; each call gets its own profile folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

__all__ = [
    "REQUIRED",
    "SKIP_LINE",
    "WIDTHS",
    "Browser",
    "Node",
    "Page",
    "find_chromium",
    "parse_html",
]

WIDTHS = (1400, 1280)
#: The window height of the first load; the screenshot takes the page's whole height.
HEIGHT = 1000
MAX_HEIGHT = 16000
TIMEOUT_SECONDS = 120
NAMES = ("chromium", "chromium-browser", "google-chrome")
#: CI must run the browser tier: there a missing Chromium fails instead of skipping.
REQUIRED = os.environ.get("CI", "").lower() in ("1", "true", "yes")
SKIP_LINE = (
    "browser tier skipped: no chromium on PATH (or $SRT_CHROMIUM); install it with "
    "`apt-get install -y chromium` or `bash .ci/install-system.sh` (required when CI=true)"
)
_FLAGS = (
    "--headless",
    "--disable-gpu",
    "--no-sandbox",
    "--no-first-run",
    "--hide-scrollbars",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--disable-domain-reliability",
    "--metrics-recording-only",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
)
_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    }
)
_PROBE_ID = "srt-browser-probe"
_PROBE = (
    """<script>(function(){
var own=function(t){var s='';t.childNodes.forEach(function(n){if(n.nodeType===3)s+=n.data;});
return s.trim();};
var out={width:innerWidth,scrollWidth:document.documentElement.scrollWidth,
height:document.documentElement.scrollHeight,overlaps:[],clipped:[]};
document.querySelectorAll('svg').forEach(function(svg,i){
var label=svg.getAttribute('aria-label')||('svg #'+i);var s=svg.getBoundingClientRect();
var boxes=[];svg.querySelectorAll('text').forEach(function(t){var r=t.getBoundingClientRect();
var txt=own(t);if(!txt||r.width===0)return;boxes.push([txt,r]);
if(r.left<s.left-1||r.right>s.right+1||r.top<s.top-1||r.bottom>s.bottom+1)
out.clipped.push([label,txt]);});
for(var a=0;a<boxes.length;a++)for(var b=a+1;b<boxes.length;b++){var p=boxes[a][1],q=boxes[b][1];
var w=Math.min(p.right,q.right)-Math.max(p.left,q.left);
var h=Math.min(p.bottom,q.bottom)-Math.max(p.top,q.top);
if(w>1&&h>1)out.overlaps.push([label,boxes[a][0],boxes[b][0]]);}});
var pre=document.createElement('pre');pre.id='"""
    + _PROBE_ID
    + """';pre.hidden=true;
pre.textContent=JSON.stringify(out);document.body.appendChild(pre);})();</script>"""
)


def find_chromium() -> str | None:
    """`$SRT_CHROMIUM`, else the first of `NAMES` on PATH."""
    explicit = os.environ.get("SRT_CHROMIUM")
    if explicit:
        return explicit
    return next((p for n in NAMES if (p := shutil.which(n))), None)


@dataclass
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # own text pieces, in order

    def iter(self, tag: str | None = None) -> Iterator[Node]:
        if tag is None or self.tag == tag:
            yield self
        for c in self.children:
            yield from c.iter(tag)

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() for c in self.children)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].text.append(data)


def parse_html(text: str) -> Node:
    builder = _Builder()
    builder.feed(text)
    builder.close()
    return builder.root


@dataclass
class Layout:
    width: int
    scroll_width: int
    height: int
    overlaps: list[tuple[str, str, str]]
    clipped: list[tuple[str, str]]
    screenshot: Path


@dataclass
class Page:
    name: str
    target: str
    dom: Node
    layouts: list[Layout]

    @property
    def screenshots(self) -> list[Path]:
        return [lay.screenshot for lay in self.layouts]

    def charts(self) -> dict[str, Node]:
        return {s.attrs["aria-label"]: s for s in self.dom.iter("svg") if "aria-label" in s.attrs}

    def table(self, key: str) -> Node | None:
        """`#id`, or the first table one of whose header cells contains `key`."""
        for t in self.dom.iter("table"):
            if key.startswith("#"):
                if t.attrs.get("id") == key[1:]:
                    return t
            elif any(key in th.all_text() for th in t.iter("th")):
                return t
        return None

    def problems(
        self, *, charts: Sequence[str] = (), tables: Sequence[str] = (), text: Sequence[str] = ()
    ) -> list[str]:
        out: list[str] = []
        drawn = self.charts()
        for want in charts:
            hits = [label for label in drawn if want in label]
            if not hits:
                out.append(f"{self.name}: no chart whose title contains {want!r}")
            for label in hits:
                if not _has_data(drawn[label]):
                    out.append(f"{self.name}: chart {label!r} has no data")
        for key in tables:
            t = self.table(key)
            if t is None:
                out.append(f"{self.name}: no table {key!r}")
            elif not any(_data_cells(tr) for tr in t.iter("tr")):
                out.append(f"{self.name}: table {key!r} has no row with data")
        body = self.dom.all_text()
        out += [f"{self.name}: the page does not say {s!r}" for s in text if s not in body]
        for lay in self.layouts:
            at = f"{self.name} at {lay.width} px"
            out += [f"{at}: in {c!r}, {a!r} overlaps {b!r}" for c, a, b in lay.overlaps]
            out += [f"{at}: in {c!r}, {a!r} sticks out of the chart" for c, a in lay.clipped]
            if lay.scroll_width > lay.width:
                out.append(f"{at}: the page is {lay.scroll_width} px wide (scrolls sideways)")
        for node in self.dom.iter():
            for attr in ("src", "href"):
                url = node.attrs.get(attr, "")
                local = url.startswith(("http://127.0.0.1", "http://localhost"))
                if url.startswith(("http://", "https://", "//")) and not local:
                    out.append(f"{self.name}: <{node.tag} {attr}={url!r}> needs the network")
        return out


def _has_data(svg: Node) -> bool:
    for node in svg.iter():
        if node.tag == "polyline" and len(node.attrs.get("points", "").split()) >= 2:
            return True
        if node.tag == "circle" or (node.tag == "path" and node.attrs.get("d")):
            return True
        if node.tag == "rect" and node.attrs.get("fill", "").startswith("#") and node.children:
            return True  # a bar (it carries its value as a tooltip)
    return False


def _data_cells(tr: Node) -> bool:
    cells = [td.all_text().strip() for td in tr.children if td.tag == "td"]
    return any(c and c != "–" for c in cells)


class Browser:
    def __init__(self, chromium: str, workdir: Path) -> None:
        self.chromium = chromium
        self.workdir = workdir
        self.rendered: list[Page] = []

    def _run(self, url: str, width: int, height: int, *extra: str) -> str:
        with tempfile.TemporaryDirectory(dir=self.workdir, prefix="profile-") as profile:
            argv = [
                self.chromium,
                *_FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                *extra,
                url,
            ]
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False
            )
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-8:])
            raise RuntimeError(f"{argv[0]} exited {done.returncode} on {url}:\n{tail}")
        return done.stdout

    def render(
        self, target: Path | str, *, name: str, save_to: Path, widths: Sequence[int] = WIDTHS
    ) -> Page:
        """Load `target` (a file or a URL) at every width; see the module docstring."""
        save_to.mkdir(parents=True, exist_ok=True)
        is_file = isinstance(target, Path)
        url = target.resolve().as_uri() if isinstance(target, Path) else target
        wait = () if is_file else ("--virtual-time-budget=5000",)
        probe_url = url
        if isinstance(target, Path):
            html = target.read_text()
            at = html.rfind("</body>")
            probed = html[:at] + _PROBE + html[at:] if at >= 0 else html + _PROBE
            copy = self.workdir / f"{name}.probe.html"
            copy.write_text(probed)
            probe_url = copy.as_uri()
        dom_text = self._run(url, WIDTHS[0], HEIGHT, *wait, "--dump-dom")
        layouts = []
        for width in widths:
            shot = save_to / f"{name}-{width}.png"
            probe: dict[str, Any] = {}
            if is_file:
                probed_dom = parse_html(self._run(probe_url, width, HEIGHT, "--dump-dom"))
                pre = next(
                    (n for n in probed_dom.iter("pre") if n.attrs.get("id") == _PROBE_ID), None
                )
                if pre is None:
                    raise RuntimeError(f"{name}: the layout probe did not run at {width} px")
                probe = json.loads(pre.all_text())
            height = int(probe.get("height", HEIGHT))
            self._run(
                url, width, min(MAX_HEIGHT, max(HEIGHT, height)), *wait, f"--screenshot={shot}"
            )
            layouts.append(
                Layout(
                    width=width,
                    scroll_width=int(probe.get("scrollWidth", width)),
                    height=height,
                    overlaps=[(str(c), str(a), str(b)) for c, a, b in probe.get("overlaps", [])],
                    clipped=[(str(c), str(a)) for c, a in probe.get("clipped", [])],
                    screenshot=shot,
                )
            )
        page = Page(name=name, target=url, dom=parse_html(dom_text), layouts=layouts)
        self.rendered.append(page)
        return page

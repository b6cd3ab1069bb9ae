"""The collector's one static page, served at ``/`` (the job list) and ``/jobs/{id}`` (a job).

The page holds no data and needs no token. Its script fetches the HTML fragment of what the
address names (``GET /ui/jobs`` or ``GET /ui/jobs/{id}``, rendered and escaped by
:mod:`~srt_cli.collector.ui_render`) with the reader's token, and refreshes it every 5 s until
the job has ended. When the collector has a token, the page asks for it once and keeps it in the
tab's sessionStorage. A log streamed to the collector opens below the page when clicked
(``GET /api/jobs/{id}/logs?file=``, the same token), inserted as text.
"""

from __future__ import annotations

from typing import Final

__all__ = ["INDEX_HTML"]

INDEX_HTML: Final = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>srtctl status-server</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.2em 1.5em; color: #222; max-width: 1400px; }
h1 small { color: #666; font-weight: normal; font-size: 60%; }
h2 { font-size: 1.1em; margin: 1.4em 0 .4em; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border-bottom: 1px solid #ddd; padding: .3em .7em; text-align: left; vertical-align: top; }
table.results td, table.results th { text-align: right; }
table.results td:last-child, table.results th:last-child { text-align: left; }
table.facts th { color: #555; font-weight: normal; }
tr.job td:first-child { border-left: 6px solid #bbb; }
tr.status-completed td:first-child { border-left-color: #1b7f3b; }
tr.status-failed td:first-child, tr.status-timeout td:first-child { border-left-color: #b00020; }
tr.status-starting td:first-child, tr.status-workers td:first-child,
tr.status-frontend td:first-child, tr.status-benchmark td:first-child {
  border-left-color: #1f5fbf; }
.badge, .verdict { border-radius: 3px; padding: 0 .45em; color: #fff; background: #888;
  white-space: nowrap; }
.status-completed.badge { background: #1b7f3b; }
.status-failed.badge, .status-timeout.badge { background: #b00020; }
.status-starting.badge, .status-workers.badge, .status-frontend.badge,
.status-benchmark.badge { background: #1f5fbf; }
.verdict.valid { background: #1b7f3b; } .verdict.invalid { background: #b00020; }
.verdict.none { background: #999; }
#diagnosis { border-left: 4px solid #b00020; padding-left: .8em; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; white-space: pre-wrap; }
.note, .culprit { color: #666; } #error { color: #b00020; }
code { background: #f4f4f4; padding: 0 .2em; }
.dashboard a { font-size: 1.1em; font-weight: bold; }
</style>
</head>
<body>
<header><a href="/">srtctl status-server</a></header>
<p id="error"></p>
<main id="main"><p class="note">Loading...</p></main>
<section id="log" hidden><h2 id="log-title"></h2><pre id="log-text"></pre></section>
<footer class="note"><p>Point a recipe at this collector with
<code>reporting.status.endpoint</code>. JSON API: <code>GET /api/jobs</code>,
<code>GET /api/jobs/{id}</code>, <code>GET /api/jobs/{id}/events</code>,
<code>GET /api/jobs/{id}/logs?file=</code>, <code>GET /api/events</code>,
<code>POST /api/jobs</code>, <code>PUT /api/jobs/{id}</code>, <code>DELETE /api/jobs/{id}</code>,
<code>POST /api/jobs/{id}/logs</code>, <code>POST /api/jobs/{id}/captures</code>,
<code>GET /api/health</code>; pages: <code>/</code>, <code>/jobs/{id}</code>
(fragments <code>GET /ui/jobs</code>, <code>GET /ui/jobs/{id}</code>).</p></footer>
<script>
"use strict";
const KEY = "srtctl-status-token";
const match = location.pathname.match(/^\\/jobs\\/([^/]+)$/);
const jobId = match ? decodeURIComponent(match[1]) : null;
let timer = null;
async function get(path) {
  const token = sessionStorage.getItem(KEY);
  const headers = token ? {Authorization: "Bearer " + token} : {};
  const response = await fetch(path, {headers});
  if (response.status === 401) {
    const entered = prompt("This collector needs a token (read or write):");
    if (entered) { sessionStorage.setItem(KEY, entered); return get(path); }
  }
  if (!response.ok) { throw new Error(path + ": HTTP " + response.status); }
  return response.text();
}
async function showLog(file) {
  const text = await get("/api/jobs/" + encodeURIComponent(jobId) + "/logs?file=" +
                         encodeURIComponent(file));
  document.getElementById("log-title").textContent = file;
  document.getElementById("log-text").textContent = text;
  const box = document.getElementById("log");
  box.hidden = false;
  box.scrollIntoView();
}
async function refresh() {
  const path = jobId === null ? "/ui/jobs" : "/ui/jobs/" + encodeURIComponent(jobId);
  try {
    const main = document.getElementById("main");
    // The fragment is rendered by the collector with every value escaped.
    main.innerHTML = await get(path);
    for (const link of main.querySelectorAll("a.streamed")) {
      link.addEventListener("click", event => {
        event.preventDefault();
        showLog(link.dataset.file).catch(error => {
          document.getElementById("error").textContent = String(error);
        });
      });
    }
    document.getElementById("error").textContent = "";
    const article = main.querySelector("article.job");
    document.title = article ? "srtctl job " + jobId : "srtctl status-server";
    if (article && article.dataset.final === "1" && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  } catch (error) {
    document.getElementById("error").textContent = String(error);
  }
}
refresh();
timer = setInterval(refresh, 5000);
</script>
</body>
</html>
"""

"""The collector's one static page: a job table that reads the JSON API from the browser.

The page itself needs no token; when the collector has one, the page asks for it once and keeps
it in the tab's sessionStorage. Every value is inserted as text, never as HTML.
"""

from __future__ import annotations

from typing import Final

__all__ = ["INDEX_HTML"]

INDEX_HTML: Final = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>srtctl status-server</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-top: .8em; }
th, td { border-bottom: 1px solid #ddd; padding: .3em .7em; text-align: left; }
tr.job { cursor: pointer; } tr.job:hover { background: #f4f4f4; }
.failed, .timeout { color: #b00020; } .completed { color: #1b7f3b; }
#note { color: #b00020; } code { background: #f4f4f4; padding: 0 .2em; }
</style>
</head>
<body>
<h1>srtctl status-server</h1>
<p>Point a recipe at this collector with <code>reporting.status.endpoint</code>.
API: <code>GET /api/jobs</code>, <code>GET /api/jobs/{id}</code>,
<code>GET /api/jobs/{id}/events</code>, <code>GET /api/events</code>,
<code>POST /api/jobs</code>, <code>PUT /api/jobs/{id}</code>,
<code>DELETE /api/jobs/{id}</code>, <code>POST /api/jobs/{id}/logs</code>,
<code>POST /api/jobs/{id}/captures</code>, <code>GET /api/health</code>.</p>
<p id="note"></p>
<table>
<thead><tr><th>job</th><th>name</th><th>cluster</th><th>status</th><th>stage</th>
<th>message</th><th>updated</th></tr></thead>
<tbody id="jobs"></tbody>
</table>
<h2 id="title"></h2>
<table><tbody id="events"></tbody></table>
<script>
"use strict";
const KEY = "srtctl-status-token";
async function api(path) {
  const token = sessionStorage.getItem(KEY);
  const headers = token ? {Authorization: "Bearer " + token} : {};
  const response = await fetch(path, {headers});
  if (response.status === 401) {
    const entered = prompt("This collector needs a token (read or write):");
    if (entered) { sessionStorage.setItem(KEY, entered); return api(path); }
  }
  if (!response.ok) { throw new Error(path + ": HTTP " + response.status); }
  return response.json();
}
function row(cells, cls) {
  const tr = document.createElement("tr");
  if (cls) { tr.className = cls; }
  for (const value of cells) {
    const td = document.createElement("td");
    td.textContent = value === null || value === undefined ? "-" : String(value);
    tr.appendChild(td);
  }
  return tr;
}
async function showJob(id) {
  const job = await api("/api/jobs/" + encodeURIComponent(id));
  document.getElementById("title").textContent = "events of " + job.job_id;
  const body = document.getElementById("events");
  body.replaceChildren(...job.events.map(e =>
    row([e.id, e.created_at, e.status, e.stage, e.message], e.status)));
}
async function refresh() {
  try {
    const page = await api("/api/jobs?per_page=100");
    const body = document.getElementById("jobs");
    body.replaceChildren(...page.jobs.map(j => {
      const tr = row([j.job_id, j.job_name, j.cluster, j.status, j.stage, j.message,
                      j.updated_at], "job " + j.status);
      tr.addEventListener("click", () => showJob(j.job_id));
      return tr;
    }));
    document.getElementById("note").textContent =
      page.total > page.jobs.length ? page.total + " jobs, newest 100 shown" : "";
  } catch (error) {
    document.getElementById("note").textContent = String(error);
  }
}
refresh();
setInterval(refresh, 5000);
</script>
</body>
</html>
"""

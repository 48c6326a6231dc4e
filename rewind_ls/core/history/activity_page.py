"""The timeline picture as one self-contained HTML page (`rewind-ls timeline --html FILE`, and the
page VS Code's webview shows): turns left to right, files top to bottom grouped by folder (a folder
folds on a click), each cell coloured by who changed the file in that turn (`activity.Grid`),
shared changes striped, conflicts outlined in red. Zoom with the slider (or ctrl+wheel), filter
files by name, click a cell for its change, a turn's number for its prompt and files.

Everything is inline (styles, script, the data as JSON) and the page's Content-Security-Policy
allows no request at all: it opens from a file, offline, and sends nothing anywhere. Only changed
cells are elements, so 200 turns x 2,000 files is a few thousand nodes, not 400,000. In a webview
(`webview=True`) a click also posts `{type: "cell" | "turn", turnId, path?}` to the extension.
"""

from __future__ import annotations

import html
import json
import re
import time

from rewind_ls.core.history.activity import Grid

WHO = ("agent", "subagent", "shell", "save", "outside", "restore", "background")
WHO_LABELS = {
    "agent": "agent (edit tool)",
    "subagent": "subagent",
    "shell": "shell command",
    "save": "your save",
    "outside": "outside turns (you, another tool)",
    "restore": "restore (rewind, revert, undo)",
    "background": "background work (after its turn ended)",
}
CHANGES = ("created", "modified", "deleted")


def grid_json(grid: Grid) -> dict[str, object]:
    """The grid in the page's compact form (arrays, indexes into WHO and CHANGES)."""
    return {
        "workspace": grid.workspace,
        "session": grid.session_id,
        "who": list(WHO),
        "whoLabels": [WHO_LABELS[w] for w in WHO],
        "changes": list(CHANGES),
        "columns": [
            [c.turn_id, c.number, c.session_kind, c.agent or "", c.prompt, c.started_at, c.state]
            for c in grid.columns
        ],
        "sessions": [c.session_id for c in grid.columns],
        "paths": grid.paths,
        "cells": [
            [
                c.row,
                c.column,
                WHO.index(c.who) if c.who in WHO else 0,
                CHANGES.index(c.change) if c.change in CHANGES else 1,
                (1 if c.shared else 0) | (2 if c.conflict else 0),
            ]
            for c in grid.cells
        ],
    }


def _script_json(data: object) -> str:
    """JSON safe inside a <script> element: no `</script>`, no HTML comment openers."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render(grid: Grid, webview: bool = False, nonce: str | None = None) -> str:
    """The whole page. `nonce`: the webview's script nonce (its CSP allows only that script)."""
    title = f"rewind-ls timeline: {grid.workspace}"
    if nonce is None:
        policy = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
        script_attr = ""
    else:
        policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'"
        script_attr = f' nonce="{html.escape(nonce)}"'
    values = {
        "POLICY": html.escape(policy),
        "TITLE": html.escape(title),
        "GENERATED": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "SCRIPT_ATTR": script_attr,
        "WEBVIEW": "true" if webview else "false",
        "DATA": _script_json(grid_json(grid)),
    }
    # One pass: a value (a path, a prompt) that holds a %NAME% of its own is never read again.
    return re.sub(r"%([A-Z_]+)%", lambda m: values.get(m.group(1), m.group(0)), _PAGE)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%POLICY%">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>
:root { --cw: 14px; --ch: 16px; --name: 320px; color-scheme: light dark;
  --bg: #fff; --fg: #1f2328; --dim: #6e7781; --line: #d0d7de; --head: #f6f8fa;
  --agent: #3b6fd8; --subagent: #8a5cd1; --shell: #e08a2c; --save: #2f9e5b; --outside: #86c29c;
  --restore: #8c959f; --background: #1a9aa8; --conflict: #d1242f; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --dim: #8d96a0;
  --line: #30363d; --head: #161b22; } }
body { margin: 0; font: 13px/1.4 system-ui, sans-serif; background: var(--bg); color: var(--fg); }
header { padding: 8px 12px; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap;
  gap: 6px 16px; align-items: center; position: sticky; top: 0; background: var(--bg); z-index: 5; }
header h1 { font-size: 14px; margin: 0; }
.legend span { display: inline-flex; align-items: center; gap: 4px; margin-right: 10px; }
.swatch { width: 12px; height: 12px; border-radius: 2px; display: inline-block; }
#grid { position: relative; }
.cols { position: sticky; top: var(--top, 44px); z-index: 4; background: var(--head);
  border-bottom: 1px solid var(--line); display: flex; }
.cols .corner { width: var(--name); min-width: var(--name); padding: 2px 8px; color: var(--dim);
  position: sticky; left: 0; background: var(--head); box-sizing: border-box; }
.turns { position: relative; height: 34px; }
.turn { position: absolute; bottom: 0; width: var(--cw); text-align: center; font-size: 10px;
  cursor: pointer; color: var(--dim); writing-mode: vertical-rl; transform: rotate(180deg);
  height: 32px; overflow: hidden; }
.turn.agent { color: var(--fg); font-weight: 600; }
.dense .turn:not(.tenth) { color: transparent; }
.dense .turn { overflow: visible; }
.turn.rewind { color: var(--restore); }
.row, .folder { display: flex; height: var(--ch); align-items: stretch; }
.row:hover { background: color-mix(in srgb, var(--agent) 8%, transparent); }
.name { width: var(--name); min-width: var(--name); padding: 0 8px 0 20px; box-sizing: border-box;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; position: sticky; left: 0;
  background: var(--bg); font: 12px/var(--ch) ui-monospace, monospace; }
.folder .name { padding-left: 8px; font-weight: 600; cursor: pointer; background: var(--head); }
.folder { background: var(--head); }
.folder.closed .name::before { content: "\\25b8 "; } .folder .name::before { content: "\\25be "; }
.cells { position: relative; border-left: 1px solid var(--line); }
.cell { position: absolute; top: 1px; bottom: 1px; width: calc(var(--cw) - 2px); margin-left: 1px;
  border-radius: 2px; cursor: pointer; }
.cell[data-who="agent"] { background: var(--agent); }
.cell[data-who="subagent"] { background: var(--subagent); }
.cell[data-who="shell"] { background: var(--shell); }
.cell[data-who="save"] { background: var(--save); }
.cell[data-who="outside"] { background: var(--outside); }
.cell[data-who="restore"] { background: var(--restore); }
.cell[data-who="background"] { background: var(--background); }
.cell[data-change="created"] { border-radius: 50% 2px 2px 50%; }
.cell[data-change="deleted"] { opacity: .55; }
.cell.shared { background-image: repeating-linear-gradient(45deg, transparent 0 3px,
  rgba(255,255,255,.65) 3px 5px); }
.cell.conflict { box-shadow: 0 0 0 2px var(--conflict); z-index: 1; }
.gridlines { position: absolute; inset: 0; pointer-events: none; background-image:
  repeating-linear-gradient(90deg, transparent 0 calc(var(--cw) * 10 - 1px), var(--line)
  calc(var(--cw) * 10 - 1px) calc(var(--cw) * 10)); }
#details { position: fixed; right: 12px; bottom: 12px; max-width: 480px; max-height: 45vh;
  overflow: auto; background: var(--head); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 12px; display: none; z-index: 6; white-space: pre-wrap; }
#details.open { display: block; }
.hidden { display: none !important; }
input[type=search] { width: 200px; }
</style></head>
<body>
<header>
  <h1>%TITLE%</h1>
  <span id="summary"></span>
  <label>zoom <input id="zoom" type="range" min="3" max="28" value="14"></label>
  <input id="filter" type="search" placeholder="filter files">
  <span class="legend" id="legend"></span>
  <span style="color:var(--dim)">generated %GENERATED%</span>
</header>
<div id="grid"></div>
<div id="details" role="dialog"></div>
<script type="application/json" id="data">%DATA%</script>
<script%SCRIPT_ATTR%>
(function () {
  "use strict";
  const WEBVIEW = %WEBVIEW%;
  const data = JSON.parse(document.getElementById("data").textContent);
  const vscode = WEBVIEW && typeof acquireVsCodeApi === "function" ? acquireVsCodeApi() : null;
  const root = document.getElementById("grid");
  const details = document.getElementById("details");
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const col = (i) => {
    const c = data.columns[i];
    return { id: c[0], number: c[1], kind: c[2], agent: c[3], prompt: c[4], at: c[5], state: c[6] };
  };
  const turnLabel = (c) => c.kind === "agent" ? "turn " + c.number + " (" + (c.agent || "agent") + ")"
    : c.kind === "rewind" ? "restore point " + c.number
    : c.kind === "editor" ? "your saves " + c.number : "outside changes " + c.number;

  // Legend with counts.
  const counts = new Array(data.who.length).fill(0);
  let conflicts = 0, shared = 0;
  for (const c of data.cells) { counts[c[2]]++; if (c[4] & 2) conflicts++; if (c[4] & 1) shared++; }
  const legend = document.getElementById("legend");
  data.who.forEach((w, i) => {
    const s = el("span"); const sw = el("span", "swatch");
    sw.style.background = "var(--" + w + ")"; s.append(sw, data.whoLabels[i] + " " + counts[i]);
    s.dataset.legend = w; legend.append(s);
  });
  const cs = el("span"); const csw = el("span", "swatch");
  csw.style.boxShadow = "0 0 0 2px var(--conflict) inset"; cs.append(csw, "conflict " + conflicts);
  const ss = el("span"); const ssw = el("span", "swatch cell shared");
  ssw.style.position = "static"; ssw.style.width = "12px"; ssw.style.background = "var(--shell)"; ss.append(ssw, "shared " + shared);
  legend.append(cs, ss);
  document.getElementById("summary").textContent =
    data.columns.length + " turns, " + data.paths.length + " files";

  // The turns' header.
  const head = el("div", "cols");
  head.append(el("div", "corner", "file \\\\ turn"));
  const turns = el("div", "turns");
  turns.style.width = "calc(var(--cw) * " + data.columns.length + ")";
  data.columns.forEach((_, i) => {
    const c = col(i);
    const t = el("div", "turn " + c.kind + ((i + 1) % 10 === 0 || i === 0 ? " tenth" : ""),
      String(c.number));
    t.style.left = "calc(var(--cw) * " + i + ")";
    t.title = turnLabel(c) + "\\n" + (c.at || "") + "\\n" + c.prompt;
    t.dataset.column = i; t.dataset.turnId = c.id;
    turns.append(t);
  });
  head.append(turns);
  root.append(head);

  // Rows grouped by folder; only changed cells are elements.
  const byRow = new Map();
  for (const c of data.cells) { if (!byRow.has(c[0])) byRow.set(c[0], []); byRow.get(c[0]).push(c); }
  const folders = new Map();
  let folderEl = null, lastFolder = null;
  const body = el("div");
  data.paths.forEach((path, r) => {
    const slash = path.lastIndexOf("/");
    const folder = slash < 0 ? "" : path.slice(0, slash);
    if (folder !== lastFolder) {
      lastFolder = folder;
      folderEl = el("div", "folder");
      const n = el("div", "name", (folder || ".") + "/");
      n.title = folder || "(the workspace root)";
      folderEl.append(n, el("div", "cells"));
      folderEl.dataset.folder = folder;
      folders.set(folder, { head: folderEl, rows: [] });
      body.append(folderEl);
    }
    const row = el("div", "row");
    row.dataset.path = path;
    const name = el("div", "name", path.slice(slash + 1));
    name.title = path;
    const cells = el("div", "cells");
    cells.style.width = "calc(var(--cw) * " + data.columns.length + ")";
    cells.append(el("div", "gridlines"));
    for (const c of byRow.get(r) || []) {
      const cell = el("div", "cell" + (c[4] & 1 ? " shared" : "") + (c[4] & 2 ? " conflict" : ""));
      cell.style.left = "calc(var(--cw) * " + c[1] + ")";
      cell.dataset.who = data.who[c[2]]; cell.dataset.change = data.changes[c[3]];
      cell.dataset.column = c[1]; cell.dataset.turn = col(c[1]).number;
      cell.dataset.turnId = col(c[1]).id; cell.dataset.path = path;
      cell.title = path + "\\n" + turnLabel(col(c[1])) + ": " + data.changes[c[3]] + " by " +
        data.whoLabels[c[2]] + (c[4] & 1 ? "\\nshared with another session" : "") +
        (c[4] & 2 ? "\\nconflict: changed by someone else later" : "");
      cells.append(cell);
    }
    row.append(name, cells);
    folders.get(folder).rows.push(row);
    body.append(row);
  });
  root.append(body);

  // Folding, filter, zoom, details.
  for (const f of folders.values()) {
    f.head.addEventListener("click", () => {
      const closed = f.head.classList.toggle("closed");
      for (const r of f.rows) r.classList.toggle("hidden", closed || !matches(r));
    });
  }
  const filter = document.getElementById("filter");
  const matches = (r) => !filter.value || r.dataset.path.toLowerCase().includes(filter.value.toLowerCase());
  filter.addEventListener("input", () => {
    for (const f of folders.values()) {
      let any = false;
      for (const r of f.rows) { const ok = matches(r); any = any || ok;
        r.classList.toggle("hidden", !ok || f.head.classList.contains("closed")); }
      f.head.classList.toggle("hidden", !any);
    }
  });
  const zoom = document.getElementById("zoom");
  const setZoom = (v) => {
    v = Math.max(3, Math.min(28, v)); zoom.value = v;
    document.documentElement.style.setProperty("--cw", v + "px");
    document.documentElement.style.setProperty("--ch", Math.max(12, Math.min(20, v + 2)) + "px");
    // Narrow columns: only every tenth turn's number, the others would overlap.
    document.body.classList.toggle("dense", v < 12);
  };
  zoom.addEventListener("input", () => setZoom(Number(zoom.value)));
  window.addEventListener("wheel", (e) => {
    if (!e.ctrlKey) return; e.preventDefault(); setZoom(Number(zoom.value) - Math.sign(e.deltaY));
  }, { passive: false });
  // Many turns: start zoomed out so the session fits the window's width.
  const room = window.innerWidth - 340;
  if (data.columns.length * 14 > room) setZoom(Math.floor(room / Math.max(1, data.columns.length)));
  document.documentElement.style.setProperty("--top", document.querySelector("header").offsetHeight + "px");
  const show = (text) => { details.textContent = text; details.classList.add("open"); };
  root.addEventListener("click", (e) => {
    const cell = e.target.closest(".cell"), turn = e.target.closest(".turn");
    if (cell) {
      show(cell.title);
      if (vscode) vscode.postMessage({ type: "cell", turnId: cell.dataset.turnId,
        path: cell.dataset.path });
    } else if (turn) {
      const i = Number(turn.dataset.column), c = col(i);
      const files = data.cells.filter((x) => x[1] === i)
        .map((x) => "  " + data.changes[x[3]][0].toUpperCase() + " " + data.paths[x[0]]);
      show(turnLabel(c) + "  " + (c.at || "") + "\\n" + c.prompt + "\\n\\n" + files.length +
        " file(s):\\n" + files.join("\\n"));
      if (vscode) vscode.postMessage({ type: "turn", turnId: c.id });
    }
  });
  details.addEventListener("click", () => details.classList.remove("open"));
  document.body.dataset.ready = "true";
})();
</script>
</body></html>
"""

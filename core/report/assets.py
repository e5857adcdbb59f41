# ruff: noqa: E501  (inline JavaScript and CSS: their lines are kept whole)
"""The report page's own CSS and JavaScript, inlined into every report (the page loads nothing from anywhere).

The script composes the graph from per-group layouts (core/report/graph_data.py): a collapsed group is a box; an
expanded one is a frame holding its own layout, and its siblings are pushed down and right to make room. A module of
one op (a leaf) is that op's box titled with the module, never framed; folded weights are rows of their op's box. Pan with
the mouse, zoom with the wheel, search with a regex, click a node for its details, click a group's title to expand or
collapse it. `#selftest=TERM` in the address runs search and expand once and writes what happened into
`<pre id="selftest-result">` (read by tests with headless Chromium's --dump-dom).
"""
from pt2_viewer.core.graph import palette

CSS = r"""
*{box-sizing:border-box}body{margin:0;font:13px system-ui,sans-serif;color:#222;display:flex;flex-direction:column;height:100vh}
header{display:flex;gap:8px;align-items:center;padding:6px 10px;border-bottom:1px solid #ccc;background:#f6f6f6;flex-wrap:wrap}
header h1{font-size:15px;margin:0 8px 0 0}header .muted{color:#666}
#main{flex:1;display:flex;min-height:0}#graph{flex:1;position:relative;overflow:hidden;background:#fff}
#graph svg{width:100%;height:100%;cursor:grab;user-select:none}#side{width:420px;overflow:auto;border-left:1px solid #ccc;padding:8px}
#tabs button{margin:0 2px 4px 0}#tabs button.on{font-weight:bold}
table{border-collapse:collapse;width:100%;font-size:12px}td,th{border-bottom:1px solid #eee;padding:2px 4px;text-align:left;vertical-align:top}
th{background:#fafafa}code,pre{font:12px ui-monospace,monospace;white-space:pre-wrap;word-break:break-word}
.sec{font-weight:bold;margin-top:8px}.ok{color:#2a7a2a}.bad{color:#b22}.note{color:#777}
.node rect{stroke:#555;stroke-width:1;rx:4}.node text{font:11px ui-monospace,monospace;pointer-events:none}
.node .sub{fill:#666;font-size:10px}.node{cursor:pointer}.node.sel rect{stroke:#06c;stroke-width:3}
.node.hit rect{stroke:#e80;stroke-width:3}.grp>rect{fill:#f4f6fa;stroke:#99a;rx:6}.grp.closed>rect{fill:#e6ebf5}
.grp .title{font:bold 12px system-ui,sans-serif;cursor:pointer}.grp .count{fill:#777;font-size:10px}
.grp.hit>rect{stroke:#e80;stroke-width:3}.edge{fill:none;stroke:#889;stroke-width:1}
.node.row rect{stroke:none;rx:2}.node.row text{font-size:10px}.node.row .badge{font-weight:bold;fill:#555}
.node.row.sel rect,.node.row.hit rect{stroke-width:2}.node.row.sel rect{stroke:#06c}.node.row.hit rect{stroke:#e80}
"""

KIND_COLOURS = palette.KIND_COLOURS  # the window's (core/graph/palette.py)

JS = r"""
"use strict";
const D = JSON.parse(document.getElementById("report-data").textContent);
const NODE_H = 38, ROW_H = 17, PAD = 14, HEADER = 26, SVGNS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
let P = null, open = new Set(), selected = null, hits = [], hitAt = -1, view = {x: 20, y: 20, s: 1};
let rects = {}, chains = [];

function chooseProgram(i) {
  P = D.programs[i]; selected = null; hits = [];
  const G = P.graph.groups;
  open = new Set(); G.forEach((g, k) => { if (k === 0 || P.graph.open.includes(g.path)) open.add(k); });
  // the groups a node sits in, outermost first; a leaf module (its op's box) is never closed, so it is left out
  chains = P.graph.nodes.map((n) => { const c = []; let g = n.group; while (g > 0) { if (!G[g].leaf) c.push(g); g = G[g].parent; } return c.reverse(); });
  $("node-count").textContent = P.graph.nodes.length + " nodes";
  // counted as the window counts them: the groups that open (a one-op module is its op's box, never a group)
  const leaves = G.filter((g, k) => k > 0 && g.leaf).length, groups = G.length - 1 - leaves;
  $("group-count").textContent = `${groups} module groups` + (leaves ? ` (+${leaves} one-op modules drawn as their op)` : "");
  $("group-count").title = "Module groups that open and close, as the window's Expand all counts them; a module " +
    "holding one op is drawn as that op's box instead";
  $("overlay").textContent = P.overlay ? `overlay ${P.overlay.name}: ${P.overlay.legend.join(" → ")}. ${P.overlay.notes.join(" ")}` : "";
  render(); firstView(); showTab(currentTab);
}

// size of group k as drawn, and its inner arrangement when open: {w, h, pos: [[item, x, y, w, h]]}
function arrange(k) {
  const g = P.graph.groups[k], items = [];
  for (const it of g.items) {
    let w, h;
    if (it[0] === "g") { const c = P.graph.groups[it[1]]; w = c.cw; h = c.ch; }
    else { const n = P.graph.nodes[nodeIndex[it[1]]]; w = n.w; h = n.h || NODE_H; }
    items.push({it, x: it[2] - w / 2, y: it[3] - h / 2, w, h});
  }
  const grown = items.filter((o) => o.it[0] === "g" && open.has(o.it[1])).sort((a, b) => a.y - b.y || a.x - b.x);
  for (const o of grown) {
    const inner = arrange(o.it[1]);
    o.inner = inner;
    const W = Math.max(inner.w + 2 * PAD, o.w), H = inner.h + 2 * PAD + HEADER;
    const dw = W - o.w, dh = H - o.h, bottom = o.y + o.h, right = o.x + o.w;
    for (const p of items) {
      if (p === o) continue;
      if (p.y >= bottom - 0.5) p.y += dh;
      else if (p.x >= right - 0.5 && p.y < o.y + H) p.x += dw;
    }
    o.w = W; o.h = H;
  }
  let w = g.lw, h = g.lh;
  for (const p of items) { w = Math.max(w, p.x + p.w + 4); h = Math.max(h, p.y + p.h + 4); }
  return {w, h, items};
}

function drawGroup(k, ox, oy, out) {
  const a = arrange(k);
  drawItems(a, ox, oy, out);
  return a;
}
function drawItems(a, ox, oy, out) {
  for (const p of a.items) {
    const x = ox + p.x, y = oy + p.y;
    if (p.it[0] === "g") {
      const gi = p.it[1], g = P.graph.groups[gi], isOpen = open.has(gi);
      rects["g" + gi] = [x, y, p.w, p.h];
      out.push(`<g class="grp ${isOpen ? "open" : "closed"}${hitGroups.has(gi) ? " hit" : ""}" data-g="${gi}">` +
        `<rect x="${x}" y="${y}" width="${p.w}" height="${p.h}"></rect>` +
        `<text class="title" data-g="${gi}" x="${x + 8}" y="${y + 17}">${isOpen ? "▾" : "▸"} ${esc(g.title)}</text>` +
        `<text class="count" x="${x + 8}" y="${y + (isOpen ? 17 : 34)}" dx="${isOpen ? 8 * g.title.length + 30 : 10}">${esc(g.count_text)}${groupChanges(g.path)}</text></g>`);
      if (isOpen) drawItems(p.inner, x + PAD, y + PAD + HEADER, out);
    } else {
      const ni = nodeIndex[p.it[1]], n = P.graph.nodes[ni];
      rects["n" + ni] = [x, y, p.w, p.h];
      const ov = overlayFill(n.name);
      const cls = "node" + (selected === ni ? " sel" : "") + (hitNodes.has(ni) ? " hit" : "") + (ov ? " ov" : "");
      const tip = n.op ? `<title>${esc(n.name)}: ${esc(n.op)} in ${esc(P.graph.groups[n.group].path)}</title>` : "";
      nodesOut.push(`<g class="${cls}" data-n="${ni}">${tip}<rect x="${x}" y="${y}" width="${p.w}" height="${p.h}" fill="${ov || COLOURS[n.kind] || COLOURS.other}"></rect>` +
        `<text x="${x + 8}" y="${y + 15}">${esc(clip(n.label, p.w - 14, 6.7))}</text><text class="sub" x="${x + 8}" y="${y + 30}">${esc(clip(n.sub, p.w - 14, 6.1))}</text></g>`);
      (n.rows || []).forEach((ri, k) => drawRow(ri, x + 3, y + NODE_H + k * ROW_H, p.w - 6));
    }
  }
}
// A diff's count of changes in a group, beside its node count (a collapsed group says what it hides).
function groupChanges(path) { const c = P.overlay && P.overlay.group_changes && P.overlay.group_changes[path]; return c ? ` · ${c} changed` : ""; }
// Text cut to what fits `w` pixels at `cw` pixels a character, ending in an ellipsis (the window elides too).
function clip(text, w, cw) { const n = Math.max(1, Math.floor(w / cw)); return text.length > n ? text.slice(0, n - 1) + "…" : text; }
// A weight folded into the op that uses it: a row of that op's box (its kind's letter, its name, its type).
const BADGE = {parameter: "P", buffer: "B", constant: "C"};
function drawRow(ri, x, y, w) {
  const r = P.graph.nodes[ri];
  rects["n" + ri] = [x, y, w, ROW_H];
  const ov = overlayFill(r.name);
  const cls = "node row" + (selected === ri ? " sel" : "") + (hitNodes.has(ri) ? " hit" : "") + (ov ? " ov" : "");
  nodesOut.push(`<g class="${cls}" data-n="${ri}"><rect x="${x}" y="${y}" width="${w}" height="${ROW_H}" fill="${ov || COLOURS[r.kind] || COLOURS.other}"></rect>` +
    `<text x="${x + 4}" y="${y + 12}"><tspan class="badge">${BADGE[r.kind] || "?"}</tspan> ${esc(r.row)}</text>` +
    `<text class="sub" x="${x + w - 4}" y="${y + 12}" text-anchor="end">${esc(r.sub)}</text></g>`);
}
// An overlay (numerics errors, the user's values) colours the nodes it covers, as the window does: its scale from
// cool (low) to hot (high), its categories in order (SCALE, CATEGORIES: core/graph/palette.py).
function mix(a, b, f) {
  const c = (h, i) => parseInt(h.slice(1 + 2 * i, 3 + 2 * i), 16);
  return "#" + [0, 1, 2].map((i) => Math.round(c(a, i) + (c(b, i) - c(a, i)) * f).toString(16).padStart(2, "0")).join("");
}
function overlayFill(name) {
  const o = P.overlay; if (!o) return null;
  if (name in o.levels) {
    const t = Math.max(0, Math.min(1, o.levels[name])) * (SCALE.length - 1), i = Math.min(Math.floor(t), SCALE.length - 2);
    return mix(SCALE[i], SCALE[i + 1], t - i);
  }
  const colours = o.colours || CATEGORIES;  // a diff brings its own (added, removed, changed)
  if (name in o.categories) return colours[o.categories[name] % colours.length];
  return null;
}
let nodesOut = [], nodeIndex = {}, hitNodes = new Set(), hitGroups = new Set();
function visibleItem(ni) {
  const host = P.graph.nodes[ni].host;  // a row shows while its host does
  if (host !== undefined) { const v = visibleItem(host); return v === "n" + host ? "n" + ni : v; }
  for (const g of chains[ni]) if (!open.has(g)) return "g" + g;
  return "n" + ni;
}
function render() {
  nodeIndex = {}; P.graph.nodes.forEach((n, i) => { nodeIndex[n.name] = i; });
  rects = {};
  const out = []; nodesOut = [];
  const a = drawGroup(0, 0, 0, out);
  const lines = new Set(), edges = [];
  for (const [s, d] of P.graph.edges) {
    const A = visibleItem(s), B = visibleItem(d);
    if (A === B || lines.has(A + ">" + B)) continue;
    lines.add(A + ">" + B);
    const ra = rects[A], rb = rects[B];
    if (!ra || !rb) continue;
    const x0 = ra[0] + ra[2] / 2, y0 = ra[1] + ra[3], x1 = rb[0] + rb[2] / 2, y1 = rb[1], m = Math.max(20, Math.abs(y1 - y0) / 2);
    edges.push(`<path class="edge" d="M${x0},${y0} C${x0},${y0 + m} ${x1},${y1 - m} ${x1},${y1}" marker-end="url(#arrow)"></path>`);
  }
  $("world").innerHTML = out.join("") + edges.join("") + nodesOut.join("");  // frames, then edges, then nodes
  $("world").dataset.w = a.w; $("world").dataset.h = a.h;
  const groups = P.graph.groups.filter((g, k) => k > 0 && !g.leaf).length;
  const opened = P.graph.groups.filter((g, k) => k > 0 && !g.leaf && open.has(k)).length;
  $("visible-count").textContent = `${document.querySelectorAll("#world .node").length} boxes shown, ${opened} of ${groups} groups open`;
  applyView();
}
function applyView() { $("world").setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.s})`); }
function fit() {
  const box = $("graph").getBoundingClientRect(), w = +$("world").dataset.w || 1, h = +$("world").dataset.h || 1;
  view.s = Math.min(1.5, Math.max(0.02, Math.min((box.width - 40) / w, (box.height - 40) / h)));
  view.x = 20; view.y = 20; applyView();
}
// The first view: the whole graph if it stays readable; else the program's start (top) at a readable zoom, with
// every user input in the graph pane (zoomed out to hold them all if need be, and centred on them when they are
// wider than the pane), never past its edge under the side panel.
const READABLE = 0.6;
function firstView() {
  fit();
  if (view.s >= READABLE) return;
  const box = $("graph").getBoundingClientRect(), w = +$("world").dataset.w || 1;
  const roomW = box.width - 40, roomH = box.height - 40, ins = inputsBox();
  let s = Math.min(1, Math.max(READABLE, roomW / w));
  if (ins) s = Math.min(s, roomW / Math.max(1, ins[2] - ins[0]), roomH / Math.max(1, ins[3] - ins[1]));
  view.s = s; view.x = 20; view.y = 20;
  if (ins && 20 + ins[2] * s > box.width - 20) view.x = (box.width - (ins[0] + ins[2]) * s) / 2;
  if (ins && 20 + ins[3] * s > box.height - 20) view.y = 20 - ins[1] * s;
  applyView();
}
// The program's user inputs as drawn (each one's box, or the collapsed group holding it), with the world box around
// them all ([x0, y0, x1, y1]); null when there are none.
function inputItems() {
  const out = [];
  P.graph.nodes.forEach((n, i) => { if (n.kind === "user_input") { const r = rects[visibleItem(i)]; if (r) out.push([n.name, r]); } });
  return out;
}
function inputsBox() {
  const items = inputItems();
  if (!items.length) return null;
  return items.reduce((b, [, r]) => [Math.min(b[0], r[0]), Math.min(b[1], r[1]), Math.max(b[2], r[0] + r[2]), Math.max(b[3], r[1] + r[3])],
    [Infinity, Infinity, -Infinity, -Infinity]);
}
// What the view shows, in page pixels (the self-test reports the first view with it): the zoom, the graph pane, the
// side panel, each user input's box on screen, and the titles of the groups and nodes drawn.
function viewReport() {
  const g = $("graph").getBoundingClientRect(), side = $("side").getBoundingClientRect();
  const px = (r) => [g.left + view.x + r[0] * view.s, g.top + view.y + r[1] * view.s, r[2] * view.s, r[3] * view.s].map((v) => Math.round(v * 10) / 10);
  const keys = Object.keys(rects);
  return {scale: view.s, graph: [g.left, g.top, g.width, g.height], side: [side.left, side.top, side.width, side.height],
    inputs: P ? inputItems().map(([name, r]) => ({name, box: px(r)})) : [],
    groups: P ? keys.filter((k) => k[0] === "g").map((k) => P.graph.groups[+k.slice(1)].title) : [],
    nodes: P ? keys.filter((k) => k[0] === "n").map((k) => P.graph.nodes[+k.slice(1)].label) : []};
}
function centerOn(key) {
  const r = rects[key]; if (!r) return;
  const box = $("graph").getBoundingClientRect();
  view.s = Math.max(view.s, 0.8);
  view.x = box.width / 2 - (r[0] + r[2] / 2) * view.s; view.y = box.height / 2 - (r[1] + r[3] / 2) * view.s; applyView();
}
function toggle(gi) { if (open.has(gi)) open.delete(gi); else open.add(gi); render(); }
function setAll(on) { open = new Set([0]); if (on) P.graph.groups.forEach((g, k) => open.add(k)); render(); fit(); }
function select(ni) {
  selected = ni; render();
  const n = P.graph.nodes[ni];
  let h = `<div class="sec">${esc(n.name)}</div><div class="note">${esc(n.target)}</div>`;
  for (const [title, rows] of n.details) {
    h += `<div class="sec">${esc(title)}</div><table>` + rows.map((r) => `<tr><td>${esc(r[0])}</td><td><code>${esc(r[1])}</code>` +
      (r[2] ? ` <span class="note">${esc(r[2])}</span>` : "") + "</td></tr>").join("") + "</table>";
  }
  const ovText = P.overlay && P.overlay.texts[n.name];
  if (ovText) h = `<div class="sec">${esc(P.overlay.name)}</div><div>${esc(ovText)}</div>` + h;
  $("tab-details").innerHTML = h; showTab("details");
}
function search(text) {
  hitNodes = new Set(); hitGroups = new Set(); hits = []; hitAt = -1;
  if (text) {
    let re; try { re = new RegExp(text, "i"); } catch (e) { re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
    P.graph.nodes.forEach((n, i) => {
      const g = P.graph.groups[n.group];
      const at = n.same !== undefined ? n.same : i;  // a name drawn in another's row (one tensor) is found at it
      if ((re.test(n.name) || re.test(n.target) || re.test(n.label) || re.test(n.op || "") || re.test(g.path)) && !hitNodes.has(at)) { hitNodes.add(at); hits.push(at); }
    });
    for (const i of hits.slice(0, 500)) {  // reveal matches in collapsed groups (a row's host's groups too)
      const host = P.graph.nodes[i].host;
      for (const g of [...chains[i], ...(host === undefined ? [] : chains[host])]) open.add(g);
    }
  }
  $("search-count").textContent = text ? hits.length + " matches" : "";
  render();
  if (hits.length) nextHit();
}
function nextHit() { if (!hits.length) return; hitAt = (hitAt + 1) % hits.length; centerOn("n" + hits[hitAt]); }

let currentTab = "details";
function showTab(name) {
  currentTab = name;
  document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("on", b.dataset.tab === name));
  document.querySelectorAll(".tab").forEach((t) => { t.style.display = t.id === "tab-" + name ? "" : "none"; });
  if (name !== "details" && (P || name === "extra")) $("tab-" + name).innerHTML = TABS[name]();
}
const table = (head, rows) => "<table><tr>" + head.map((h) => `<th>${esc(h)}</th>`).join("") + "</tr>" +
  rows.map((r) => "<tr>" + r.map((c) => `<td>${c}</td>`).join("") + "</tr>").join("") + "</table>";
const TABS = {
  signature: () => table(["", "name", "kind", "target", "type"], P.signature.map((r) => [r.direction, `<code>${esc(r.name)}</code>`, esc(r.kind), `<code>${esc(r.target)}</code>`, `<code>${esc(r.type)}</code>`])),
  symbols: () => (P.symbols.length ? table(["symbol", "range", "stands for"], P.symbols.map((s) => [`<code>${esc(s.name)}</code>`, esc(s.range), esc(s.sources.join(", "))])) : "<p>No symbolic dimensions: every shape is static.</p>") +
    "<div class='sec'>Guards</div>" + (P.guards.length ? P.guards.map((g) => `<pre>${esc(g)}</pre>`).join("") : "<p class='note'>No guards recorded in this program.</p>"),
  extra: () => D.extra_html || "",
};

function wire() {
  const svg = $("svg"); let drag = null;
  svg.addEventListener("mousedown", (e) => { drag = [e.clientX - view.x, e.clientY - view.y, e.clientX, e.clientY]; svg.style.cursor = "grabbing"; });
  window.addEventListener("mousemove", (e) => { if (drag) { view.x = e.clientX - drag[0]; view.y = e.clientY - drag[1]; applyView(); } });
  window.addEventListener("mouseup", () => { drag = null; svg.style.cursor = ""; });
  svg.addEventListener("wheel", (e) => {
    e.preventDefault(); const box = svg.getBoundingClientRect(), mx = e.clientX - box.left, my = e.clientY - box.top;
    const f = Math.exp(-e.deltaY * 0.0015), s = Math.min(4, Math.max(0.01, view.s * f));
    view.x = mx - (mx - view.x) * s / view.s; view.y = my - (my - view.y) * s / view.s; view.s = s; applyView();
  }, {passive: false});
  svg.addEventListener("click", (e) => {
    const t = e.target.closest("[data-n],.title");
    if (!t) return;
    if (t.classList.contains("title")) toggle(+t.dataset.g); else select(+t.dataset.n);
  });
  $("search").addEventListener("keydown", (e) => { if (e.key === "Enter") { if ($("search").value === lastSearch) nextHit(); else { lastSearch = $("search").value; search(lastSearch); } } });
  $("expand-all").onclick = () => setAll(true); $("collapse-all").onclick = () => setAll(false); $("fit").onclick = fit;
  document.querySelectorAll("#tabs button").forEach((b) => { b.onclick = () => showTab(b.dataset.tab); });
  const pick = $("program");
  D.programs.forEach((p, i) => { const o = document.createElement("option"); o.value = i; o.textContent = p.name; pick.appendChild(o); });
  pick.style.display = D.programs.length > 1 ? "" : "none";
  pick.onchange = () => chooseProgram(+pick.value);
}
let lastSearch = "";

function selftest(term) {
  const r = {errors: [], node_count_text: $("node-count").textContent, group_count_text: $("group-count").textContent};
  const box = $("search"), css = getComputedStyle(box), pen = document.createElement("canvas").getContext("2d");
  pen.font = css.font;  // the placeholder whole in its box (it read "…(regex), En")
  r.search_placeholder = {text: box.placeholder, width: pen.measureText(box.placeholder).width,
                          room: box.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight)};
  const count = (sel) => document.querySelectorAll(sel).length;
  try {
    r.first_view = viewReport();
    setAll(false);
    r.collapsed = {nodes: count("#world .node"), groups: count("#world .grp")};
    const closed = document.querySelector("#world .grp.closed .title");
    if (closed) {
      closed.dispatchEvent(new MouseEvent("click", {bubbles: true}));
      r.expanded_one = {nodes: count("#world .node"), groups: count("#world .grp"), open: count("#world .grp.open")};
    }
    setAll(false);
    $("search").value = term; $("search").dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true}));
    r.search = {count_text: $("search-count").textContent, hits: count("#world .node.hit"), nodes: count("#world .node")};
    const hit = document.querySelector("#world .node.hit");
    if (hit) { hit.dispatchEvent(new MouseEvent("click", {bubbles: true})); r.details = $("tab-details").textContent.slice(0, 300); }
    setAll(true);
    r.all_open = {nodes: count("#world .node"), groups: count("#world .grp"), text: $("visible-count").textContent};
    r.overlay = {text: $("overlay").textContent, coloured: count("#world .node.ov")};
    for (const tab of ["signature", "symbols", "extra"]) { showTab(tab); r[tab] = $("tab-" + tab).textContent.slice(0, tab === "extra" ? 50000 : 2000); }
  } catch (e) { r.errors.push(String(e && e.stack || e)); }
  r.errors.push(...window.__errors);
  const pre = document.createElement("pre"); pre.id = "selftest-result"; pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
}

wire();
if (D.programs.length) chooseProgram(0); else { $("counts").style.display = "none"; showTab("extra"); }
const m = /^#selftest=(.*)$/.exec(location.hash);
if (m) selftest(decodeURIComponent(m[1]));
"""

# Set before the main script so that errors anywhere on the page are kept for the self-test.
ERROR_TRAP = "window.__errors=[];window.addEventListener('error',function(e){window.__errors.push(String(e.message))});"

"use strict";
// tldrgraph's map. Reads the embedded graph as data and writes text only through textContent
// and attributes it names itself: nothing from the repository is ever parsed as markup.
// Aggregates draw at once; files, symbols and edges are indexed and listed when asked for.
(() => {
  const D = JSON.parse(document.getElementById("tg-data").textContent);
  // Row fields (see export.rs).
  const NAME = 0, QUAL = 1, KIND = 2, FILE = 3, START = 4, END = 5, LAYER = 6, ROLE = 7,
    PARENT = 8, RANK = 9, SIG = 10, INTENT = 11, INTENT_SOURCE = 12, DOC = 13;
  const SRC = 0, DST = 1, EKIND = 2, CONF = 3, LINE = 4, VIOL = 5;
  const PAGE = 100; // rows a list shows before "show more"
  const ROLE_COLOURS = { product: "#2563eb", test: "#16a34a", example: "#d97706", generated: "#6b7280", tooling: "#9333ea" };
  const fmt = (n) => Number(n).toLocaleString("en-US");
  const $ = (id) => document.getElementById(id);
  const plural = (n, word, many = word + "s") => `${fmt(n)} ${n === 1 ? word : many}`;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "onclick") {
        // Whatever a click opens, Tab and Enter reach too.
        node.addEventListener("click", v);
        node.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); v(ev); } });
        if (tag !== "button") node.setAttribute("tabindex", "0");
      } else node.setAttribute(k, String(v));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  function svg(tag, attrs, text) {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // ---- lazily built indices ----
  let adjacency = null; // [out edge indices per symbol, in edge indices per symbol]
  function edgesOf() {
    if (!adjacency) {
      const out = D.symbols.map(() => []), inn = D.symbols.map(() => []);
      D.edges.forEach((e, i) => { out[e[SRC]].push(i); inn[e[DST]].push(i); });
      adjacency = [out, inn];
    }
    return adjacency;
  }
  let symbolById = null;
  function symbolIndex(id) {
    if (!symbolById) {
      symbolById = new Map();
      D.symbols.forEach((s, i) => symbolById.set(idOf(s), i));
    }
    return symbolById.get(id);
  }
  let byFile = null;
  function symbolsOfFile(f) {
    if (!byFile) {
      byFile = new Map();
      D.symbols.forEach((s, i) => {
        if (!byFile.has(s[FILE])) byFile.set(s[FILE], []);
        byFile.get(s[FILE]).push(i);
      });
    }
    return byFile.get(f) || [];
  }
  const idOf = (s) => (s[QUAL] ? D.files[s[FILE]] + "::" + s[QUAL] : D.files[s[FILE]]);
  const labelOf = (s) => s[QUAL] || D.files[s[FILE]];
  const layerOf = (s) => D.layers[s[LAYER]];

  // ---- header ----
  function header() {
    $("repo").textContent = D.repo;
    const shown = D.layers.reduce((a, l) => a + l.symbols, 0);
    const modules = D.symbols.filter((s) => !s[QUAL]).length;
    $("totals").textContent = `${plural(shown, "symbol")} (${fmt(modules)} of them modules) · ${plural(D.files.length, "file")} · ` +
      `${plural(D.edges.length, "dependency", "dependencies")} · ${plural(D.layers.length, "layer")} · ` +
      `${plural(D.violations.length, "violation")} · ${plural(D.candidates, "bottleneck candidate")}`;
    if (D.stale) { $("stale").textContent = D.stale; $("stale").hidden = false; }
    const legend = $("legend");
    D.roles.forEach((r) => legend.append(el("span", {}, roleSwatch(r), r)));
    legend.append(el("span", {}, el("span", { class: "star" }, "★ "), "bottleneck candidate"));
    legend.append(el("span", { class: "violation-text" }, "— violation"));
  }
  function roleSwatch(role) {
    const s = el("span", { class: "swatch" });
    s.style.background = ROLE_COLOURS[role] || "#999";
    return s;
  }

  // ---- the bands ----
  function drawBands() {
    const box = $("bands");
    const width = Math.max(520, box.clientWidth || 640);
    const bandW = Math.min(460, Math.round(width * 0.6)), bandH = 62, gap = 22, top = 8;
    const n = D.layers.length;
    const height = top * 2 + n * bandH + Math.max(0, n - 1) * gap;
    box.setAttribute("viewBox", `0 0 ${width} ${height}`);
    box.setAttribute("height", height);
    const defs = svg("defs");
    defs.append(arrowMarker("arrow", "#64748b"), arrowMarker("arrow-violation", "#dc2626"));
    box.append(defs);
    const maxSymbols = Math.max(1, ...D.layers.map((l) => l.symbols));
    D.layers.forEach((layer, i) => {
      const y = top + i * (bandH + gap);
      const g = svg("g", { class: "band", "data-layer": layer.id, "data-symbols": layer.symbols, tabindex: 0 });
      g.append(svg("title", {}, layer.description ? `${layer.name}: ${layer.description}` : layer.name));
      g.append(svg("rect", { class: "frame", x: 0.5, y: y + 0.5, width: bandW, height: bandH, rx: 6 }));
      g.append(svg("text", { class: "name", x: 10, y: y + 19 }, `${layer.name}${layer.name === layer.id ? "" : " (" + layer.id + ")"}`));
      const parts = D.roles.map((r, k) => layer.by_role[k] ? `${fmt(layer.by_role[k])} ${r}` : null).filter(Boolean);
      g.append(svg("text", { class: "counts", x: 10, y: y + 36 },
        `${plural(layer.symbols, "symbol")} · ${plural(layer.files, "file")}${layer.candidates ? " · ★ " + fmt(layer.candidates) : ""}`));
      g.append(svg("text", { class: "counts", x: 10, y: y + 51 }, parts.join(" · ") || "empty"));
      // Role bar, its length the layer's share of the largest.
      let x = bandW - 150;
      const barW = 140 * layer.symbols / maxSymbols;
      D.roles.forEach((r, k) => {
        const w = layer.symbols ? barW * layer.by_role[k] / layer.symbols : 0;
        if (w > 0) g.append(svg("rect", { x, y: y + bandH - 16, width: w, height: 8, fill: ROLE_COLOURS[r] || "#999" }));
        x += w;
      });
      g.addEventListener("click", () => go("layer", layer.id));
      g.addEventListener("keydown", (ev) => { if (ev.key === "Enter") go("layer", layer.id); });
      box.append(g);
    });
    drawArcs(box, bandW, (i) => top + i * (bandH + gap), bandH, width);
  }
  function arrowMarker(id, colour) {
    const m = svg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" });
    m.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: colour }));
    return m;
  }
  // Arcs on the right of the bands, one lane each (shorter spans inside), each end at its own
  // height on the band so that arrows do not pile up; width by log of the edge count; violations
  // red. Counts are written beside the arcs while there are few enough to read.
  function drawArcs(box, bandW, bandTop, bandH, width) {
    const arcs = D.layer_edges.map((e, k) => ({ e, k }));
    const ends = D.layers.map(() => []);
    arcs.forEach((a) => { ends[a.e.from].push([a, "y1", a.e.to]); ends[a.e.to].push([a, "y2", a.e.from]); });
    ends.forEach((list, band) => {
      list.sort((p, q) => p[2] - q[2] || p[0].k - q[0].k);
      list.forEach(([a, which], k) => { a[which] = bandTop(band) + 10 + (bandH - 20) * (list.length === 1 ? 0.5 : k / (list.length - 1)); });
    });
    const lanes = arcs.slice().sort((p, q) => Math.abs(p.e.to - p.e.from) - Math.abs(q.e.to - q.e.from) || p.k - q.k);
    const laneGap = Math.max(3, Math.min(16, (width - bandW - 60) / Math.max(1, lanes.length)));
    lanes.forEach((a, lane) => { a.reach = 22 + lane * laneGap; });
    const maxTotal = Math.max(1, ...D.layer_edges.map((e) => e.total));
    const x = bandW + 2;
    const placed = [];
    arcs.forEach(({ e, y1, y2, reach }) => {
      const bad = e.violations > 0;
      const path = svg("path", {
        class: "arc" + (bad ? " violation" : ""),
        d: `M${x},${y1.toFixed(1)} C${(x + reach).toFixed(1)},${y1.toFixed(1)} ${(x + reach).toFixed(1)},${y2.toFixed(1)} ${x + 3},${y2.toFixed(1)}`,
        "stroke-width": (1 + 4 * Math.log1p(e.total) / Math.log1p(maxTotal)).toFixed(2),
        "marker-end": `url(#${bad ? "arrow-violation" : "arrow"})`,
        "data-from": D.layers[e.from].id, "data-to": D.layers[e.to].id, "data-total": e.total, "data-violations": e.violations,
      });
      path.append(svg("title", {}, `${D.layers[e.from].name} → ${D.layers[e.to].name}: ${kindsText(e.by_kind)}` +
        (bad ? `; ${fmt(e.violations)} violations` : "")));
      path.addEventListener("click", () => go("between", `${D.layers[e.from].id},${D.layers[e.to].id}`));
      box.append(path);
      const text = bad ? `${fmt(e.total)} (${fmt(e.violations)}✗)` : fmt(e.total);
      const spot = labelSpot(placed, x + reach * 0.75 + 4, (y1 + y2) / 2 + 4, text.length * 6.5);
      if (spot) box.append(svg("text", { class: "arc-label" + (bad ? " violation" : ""), x: spot[0].toFixed(1), y: spot[1].toFixed(1) }, text));
    });
  }
  // Where a label of `width` near (x, y) collides with none placed so far (a few nudges down and
  // up), or null: the arc's tooltip and the table below still give its numbers.
  function labelSpot(placed, x, y, width) {
    for (const dy of [0, 13, -13, 26, -26]) {
      const box = [x, y + dy - 10, x + width, y + dy + 3];
      if (!placed.some((p) => box[0] < p[2] && p[0] < box[2] && box[1] < p[3] && p[1] < box[3])) {
        placed.push(box);
        return [x, y + dy];
      }
    }
    return null;
  }
  const kindsText = (byKind) => D.edge_kinds.map((k, i) => byKind[i] ? `${fmt(byKind[i])} ${k}` : null).filter(Boolean).join(", ");

  // ---- overview tables ----
  function layerEdgeTable() {
    const t = $("layer-edges");
    t.append(el("thead", {}, el("tr", {}, el("th", {}, "from"), el("th", {}, "to"),
      D.edge_kinds.map((k) => el("th", { class: "n" }, k)), el("th", { class: "n" }, "violations"))));
    const body = el("tbody");
    D.layer_edges.forEach((e) => {
      body.append(el("tr", {
        class: e.violations ? "violation" : null, "data-from": D.layers[e.from].id, "data-to": D.layers[e.to].id,
        onclick: () => go("between", `${D.layers[e.from].id},${D.layers[e.to].id}`),
      }, el("td", {}, D.layers[e.from].name), el("td", {}, D.layers[e.to].name),
      e.by_kind.map((n) => el("td", { class: "n" }, fmt(n))), el("td", { class: "n" }, fmt(e.violations))));
    });
    t.append(body);
    if (!D.layer_edges.length) t.append(el("caption", { class: "muted" }, "no dependency crosses a layer boundary"));
  }
  function violationList() {
    $("violation-count").textContent = `(${fmt(D.violations.length)})`;
    const list = $("violations");
    if (!D.violations.length) {
      const ruled = D.layers.some((l) => l.may_depend_on);
      list.replaceWith(el("p", { id: "violations", class: "muted" }, ruled
        ? "None: every dependency keeps to may_depend_on."
        : "No layer states may_depend_on, so no dependency can break it."));
      return;
    }
    paged(list, D.violations, (i) => edgeItem(D.edges[i], "violation"));
  }
  // An edge as a line: where it is, from what to what, and how sure.
  function edgeItem(e, cls) {
    const s = D.symbols[e[SRC]], t = D.symbols[e[DST]];
    return el("li", { class: cls, "data-src": idOf(s), "data-dst": idOf(t), onclick: () => go("symbol", idOf(s)) },
      el("span", { class: "loc" }, `${D.files[s[FILE]]}:${e[LINE]}`), " ",
      labelOf(s), el("span", { class: "muted" }, ` (${layerOf(s).name})`), ` ${D.edge_kinds[e[EKIND]]} `,
      labelOf(t), el("span", { class: "muted" }, ` (${layerOf(t).name})`), " ", el("span", { class: "conf" }, confText(e[CONF])));
  }
  const confText = (c) => (c / 1000).toFixed(2);

  // A list that renders PAGE items, then more on request.
  function paged(list, items, render) {
    let shown = 0;
    const more = el("button", { class: "more", type: "button" });
    const step = () => {
      const next = items.slice(shown, shown + PAGE);
      next.forEach((it) => list.append(render(it)));
      shown += next.length;
      more.textContent = `show ${fmt(Math.min(PAGE, items.length - shown))} more of ${fmt(items.length - shown)}`;
      more.hidden = shown >= items.length;
    };
    more.addEventListener("click", step);
    step();
    list.after(more);
  }

  // ---- detail views ----
  // Shows a view; on a narrow window, where the panel sits below the map, scrolls to it.
  function detail(...children) {
    const d = $("detail");
    d.replaceChildren(...children);
    d.scrollTop = 0;
    if (window.matchMedia("(max-width: 1000px)").matches) d.scrollIntoView({ block: "start" });
  }
  function pickBand(id) {
    document.querySelectorAll(".band").forEach((b) => b.classList.toggle("picked", b.dataset.layer === id));
  }
  function crumbs(...parts) {
    const c = el("div", { class: "crumbs" }, el("a", { onclick: () => go("", "") }, "map"));
    parts.forEach(([label, kind, value]) => { c.append(" › "); c.append(kind ? el("a", { onclick: () => go(kind, value) }, label) : label); });
    return c;
  }
  function showLayer(id) {
    const li = D.layers.findIndex((l) => l.id === id);
    if (li < 0) return notFound(`no layer ${id}`);
    const layer = D.layers[li];
    pickBand(id);
    const counts = new Map();
    D.symbols.forEach((s) => { if (s[LAYER] === li) counts.set(s[FILE], (counts.get(s[FILE]) || 0) + 1); });
    const files = [...counts.entries()].sort((a, b) => b[1] - a[1] || (D.files[a[0]] < D.files[b[0]] ? -1 : 1));
    const list = el("ol", { class: "list", id: "layer-files" });
    const box = el("div", { id: "layer-detail", "data-layer": id },
      crumbs([layer.name]), el("h2", {}, layer.name, el("small", {}, ` ${layer.id}`)),
      layer.description ? el("p", {}, layer.description) : null,
      el("dl", {},
        el("dt", {}, "symbols"), el("dd", { "data-count": "symbols" }, fmt(layer.symbols)),
        D.roles.map((r, k) => [el("dt", {}, r), el("dd", { "data-count": r }, fmt(layer.by_role[k]))]),
        el("dt", {}, "files"), el("dd", {}, fmt(layer.files)),
        el("dt", {}, "internal dependencies"), el("dd", {}, fmt(layer.internal_edges)),
        el("dt", {}, "may depend on"), el("dd", {}, layer.may_depend_on ? (layer.may_depend_on.join(", ") || "nothing") : "anything"),
        el("dt", {}, "bottleneck candidates"), el("dd", {}, fmt(layer.candidates))),
      el("h3", {}, `Files (${fmt(files.length)})`), list);
    detail(box);
    paged(list, files, ([f, n]) => el("li", { "data-file": D.files[f], onclick: () => go("file", D.files[f]) },
      el("span", { class: "loc" }, D.files[f]), el("span", { class: "muted" }, ` ${plural(n, "symbol")}`)));
  }
  function showFile(path) {
    const f = D.files.indexOf(path);
    if (f < 0) return notFound(`no file ${path}`);
    const syms = symbolsOfFile(f).slice().sort((a, b) => D.symbols[a][START] - D.symbols[b][START] || a - b);
    const depth = (i) => { let d = 0, p = D.symbols[i][PARENT]; while (p >= 0 && d < 8) { d++; p = D.symbols[p][PARENT]; } return d; };
    const list = el("ul", { class: "list", id: "file-symbols" });
    const first = syms.length ? layerOf(D.symbols[syms[0]]) : null;
    pickBand(first ? first.id : null);
    detail(el("div", { id: "file-detail", "data-file": path },
      crumbs(...(first ? [[first.name, "layer", first.id]] : []), [path]),
      el("h2", { class: "loc" }, path), el("h3", {}, `Symbols (${fmt(syms.length)})`), list));
    paged(list, syms, (i) => {
      const s = D.symbols[i];
      const item = symbolLine(i);
      item.style.marginLeft = `${depth(i) * 14}px`;
      item.append(el("span", { class: "muted" }, ` ${s[START]}–${s[END]}`));
      return item;
    });
  }
  function symbolLine(i) {
    const s = D.symbols[i];
    return el("li", { "data-symbol": idOf(s), onclick: () => go("symbol", idOf(s)) },
      el("span", { class: "kind" }, D.kinds[s[KIND]]), s[RANK] ? el("span", { class: "star", title: `bottleneck candidate #${s[RANK]}` }, "★ ") : null,
      labelOf(s));
  }
  function showSymbol(id) {
    const i = symbolIndex(id);
    if (i === undefined) return notFound(`no symbol ${id}`);
    const s = D.symbols[i], layer = layerOf(s), file = D.files[s[FILE]];
    const role = el("span", { class: "role" }, D.roles[s[ROLE]]);
    role.style.background = ROLE_COLOURS[D.roles[s[ROLE]]] || "#999";
    const [out, inn] = edgesOf();
    pickBand(layer.id);
    const box = el("div", { id: "symbol-detail", "data-symbol": id },
      crumbs([layer.name, "layer", layer.id], [file, "file", file], [labelOf(s)]),
      el("h2", {}, el("span", { class: "kind" }, D.kinds[s[KIND]]), s[RANK] ? el("span", { class: "star" }, "★ ") : null,
        el("span", { id: "symbol-name" }, labelOf(s)), " ", role),
      el("dl", {},
        el("dt", {}, "id"), el("dd", { class: "loc" }, id),
        el("dt", {}, "where"), el("dd", { class: "loc", id: "symbol-where" }, `${file}:${s[START]}-${s[END]}`),
        el("dt", {}, "layer"), el("dd", { id: "symbol-layer" }, layer.name),
        el("dt", {}, "intent"), el("dd", { id: "symbol-intent" }, s[INTENT] || el("span", { class: "muted" }, "none yet"),
          s[INTENT] && s[INTENT_SOURCE] ? el("span", { class: "muted" }, ` (${s[INTENT_SOURCE]})`) : null),
        s[DOC] && s[DOC] !== s[INTENT] ? [el("dt", {}, "doc"), el("dd", { id: "symbol-doc" }, s[DOC])] : null,
        s[RANK] ? [el("dt", {}, "bottleneck"), el("dd", {}, `candidate #${s[RANK]} of ${fmt(D.candidates)}`)] : null,
        s[PARENT] >= 0 ? [el("dt", {}, "inside"), el("dd", {}, el("a", { onclick: () => go("symbol", idOf(D.symbols[s[PARENT]])) }, labelOf(D.symbols[s[PARENT]])))] : null),
      s[SIG] ? el("pre", { id: "symbol-signature" }, s[SIG]) : null);
    const callers = el("ol", { class: "list", id: "callers" }), callees = el("ol", { class: "list", id: "callees" });
    box.append(el("h3", {}, `Callers and dependants (${fmt(inn[i].length)})`), callers,
      el("h3", {}, `Callees and dependencies (${fmt(out[i].length)})`), callees);
    detail(box);
    // Product code first (tests and examples exercise it), then the surest edges.
    const product = D.roles.indexOf("product");
    const order = (end) => (list) => list.slice().sort((a, b) =>
      (D.symbols[D.edges[a][end]][ROLE] !== product) - (D.symbols[D.edges[b][end]][ROLE] !== product) ||
      D.edges[b][CONF] - D.edges[a][CONF] || D.edges[a][LINE] - D.edges[b][LINE] || a - b);
    paged(callers, order(SRC)(inn[i]), (e) => neighbour(D.edges[e], D.edges[e][SRC], D.files[D.symbols[D.edges[e][SRC]][FILE]]));
    paged(callees, order(DST)(out[i]), (e) => neighbour(D.edges[e], D.edges[e][DST], file));
  }
  // A caller or callee, with where the edge is (`at`: the file of the line that makes it).
  function neighbour(e, other, at) {
    const o = D.symbols[other];
    return el("li", { class: e[VIOL] ? "violation-text" : null, "data-symbol": idOf(o), "data-confidence": confText(e[CONF]), onclick: () => go("symbol", idOf(o)) },
      el("span", { class: "kind" }, D.edge_kinds[e[EKIND]]), labelOf(o),
      el("span", { class: "muted" }, ` ${layerOf(o).name} · `), el("span", { class: "loc" }, `${at}:${e[LINE]}`), " ",
      el("span", { class: "conf", title: "confidence" }, confText(e[CONF])), e[VIOL] ? " ✗ violation" : "");
  }
  function showBetween(pair) {
    const [from, to] = pair.split(",");
    const a = D.layers.findIndex((l) => l.id === from), b = D.layers.findIndex((l) => l.id === to);
    if (a < 0 || b < 0) return notFound(`no layers ${pair}`);
    const edges = [];
    D.edges.forEach((e, i) => { if (D.symbols[e[SRC]][LAYER] === a && D.symbols[e[DST]][LAYER] === b) edges.push(i); });
    edges.sort((x, y) => D.edges[y][VIOL] - D.edges[x][VIOL] || D.symbols[D.edges[x][SRC]][FILE] - D.symbols[D.edges[y][SRC]][FILE] || D.edges[x][LINE] - D.edges[y][LINE]);
    const list = el("ol", { class: "list", id: "between-edges" });
    detail(el("div", { id: "between-detail" }, crumbs([`${D.layers[a].name} → ${D.layers[b].name}`]),
      el("h2", {}, `${D.layers[a].name} → ${D.layers[b].name}`, el("small", {}, ` ${fmt(edges.length)} dependencies`)), list));
    paged(list, edges, (i) => edgeItem(D.edges[i], D.edges[i][VIOL] ? "violation-text" : null));
  }
  function notFound(text) { detail(crumbs(), el("p", { class: "muted" }, text)); }
  function showHome() {
    pickBand(null);
    detail(el("p", { class: "hint" }, "Click a layer, an arc, a violation or a search result."));
  }

  // ---- navigation: the location's hash is the view, so Back works and a view can be linked ----
  function go(kind, value) {
    const hash = kind ? `#${kind}=${encodeURIComponent(value)}` : "#";
    if (location.hash === hash) route(); else location.hash = hash;
  }
  function route() {
    const m = /^#(layer|file|symbol|between)=(.*)$/.exec(location.hash);
    if (!m) return showHome();
    let value;
    try { value = decodeURIComponent(m[2]); } catch (_) { return notFound("a damaged link"); }
    ({ layer: showLayer, file: showFile, symbol: showSymbol, between: showBetween })[m[1]](value);
  }

  // ---- search, by name and by intent ----
  const SEARCH_LIMIT = 50;
  let lowered = null;
  function search(query) {
    const q = query.trim().toLowerCase();
    if (q.length < 2) return { shown: [], total: 0 };
    if (!lowered) lowered = D.symbols.map((s) => [s[NAME].toLowerCase(), (s[QUAL] || D.files[s[FILE]]).toLowerCase(), (s[INTENT] + " " + s[DOC]).toLowerCase()]);
    const words = q.split(/\s+/).filter(Boolean);
    const hits = [];
    lowered.forEach(([name, qual, text], i) => {
      let score = 0;
      if (name === q || qual === q) score = 100;
      else if (name.startsWith(q)) score = 60;
      else if (name.includes(q) || qual.includes(q)) score = 40;
      else if (words.every((w) => text.includes(w) || qual.includes(w))) score = 20;
      if (!score) return;
      const s = D.symbols[i];
      if (D.roles[s[ROLE]] === "product") score += 5;
      if (s[RANK]) score += 3;
      if (s[INTENT]) score += 1;
      hits.push([score, i]);
    });
    hits.sort((a, b) => b[0] - a[0] || D.symbols[a[1]][QUAL].length - D.symbols[b[1]][QUAL].length || a[1] - b[1]);
    return { shown: hits.slice(0, SEARCH_LIMIT).map((h) => h[1]), total: hits.length };
  }
  function wireSearch() {
    const input = $("search"), results = $("results");
    let timer = 0, active = -1;
    const close = () => { results.hidden = true; active = -1; };
    const render = () => {
      const { shown: found, total } = search(input.value);
      results.replaceChildren(...found.map((i) => {
        const s = D.symbols[i];
        return el("li", { "data-symbol": idOf(s), onclick: () => { close(); go("symbol", idOf(s)); } },
          el("span", { class: "kind" }, D.kinds[s[KIND]]), s[RANK] ? el("span", { class: "star" }, "★ ") : null, labelOf(s),
          el("div", { class: "muted" }, `${D.files[s[FILE]]}:${s[START]} · ${layerOf(s).name}${s[INTENT] ? " · " + s[INTENT] : ""}`));
      }));
      if (!found.length && input.value.trim().length >= 2) results.append(el("li", { class: "muted" }, "no symbol matches"));
      if (total > found.length) results.append(el("li", { class: "muted" }, `the first ${fmt(found.length)} of ${fmt(total)} matches; type more to narrow them`));
      results.hidden = !results.childElementCount;
      active = -1;
    };
    input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(render, 120); });
    input.addEventListener("keydown", (ev) => {
      const items = [...results.querySelectorAll("li[data-symbol]")];
      if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        if (!items.length) return;
        active = (active + (ev.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
        items.forEach((li, k) => li.classList.toggle("active", k === active));
        items[active].scrollIntoView({ block: "nearest" });
        ev.preventDefault();
      } else if (ev.key === "Enter") {
        clearTimeout(timer);
        if (results.hidden) render();
        const pick = [...results.querySelectorAll("li[data-symbol]")][Math.max(active, 0)];
        if (pick) pick.click();
      } else if (ev.key === "Escape") close();
    });
    document.addEventListener("click", (ev) => { if (!ev.target.closest(".searchbox")) close(); });
  }

  header();
  drawBands();
  layerEdgeTable();
  violationList();
  wireSearch();
  window.addEventListener("hashchange", route);
  route();
  // Time to first render, from navigation start, for the benchmark and the tests.
  requestAnimationFrame(() => requestAnimationFrame(() => {
    document.documentElement.setAttribute("data-rendered-ms", String(Math.round(performance.now())));
  }));
})();

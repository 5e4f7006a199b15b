// wireproof view: the pages of the evidence viewer. Plain JavaScript, no
// build step, no network beyond this server's JSON API (see view/doc.go).
"use strict";

// ---------- small helpers ----------

function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k === "dataset") Object.assign(e.dataset, v);
      else if (k === "style") e.style.cssText = v; // CSSOM: allowed by the page's CSP, unlike style attributes
      else e.setAttribute(k, v === true ? "" : v);
    }
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    e.append(kid instanceof Node ? kid : String(kid));
  }
  return e;
}

async function api(path) {
  const busy = document.getElementById("busy");
  busy.hidden = false;
  try {
    const r = await fetch(path);
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  } finally {
    busy.hidden = true;
  }
}

function ms(ns) {
  if (ns === undefined || ns === null) return "";
  const v = ns / 1e6;
  if (Math.abs(v) >= 10000) return (v / 1000).toFixed(2) + " s";
  if (Math.abs(v) >= 100) return v.toFixed(0) + " ms";
  return v.toFixed(2) + " ms";
}

function kindClass(kind) { return "k-" + String(kind).split(".")[0]; }

// suiteBadges shows every suite that ran with its status and, when it
// failed, its failing check: a verdict that failed one suite does not hide
// how the others ended.
function suiteBadges(v) {
  const suites = v.suites && v.suites.length ? v.suites : [];
  if (!suites.length) return null;
  return h("span", { class: "suites", id: "suites" }, suites.map((s) =>
    h("span", { class: "suite", dataset: { suite: s.suite, status: s.status, check: s.failure ? s.failure.check : "" } },
      badge(s.status, `${s.suite} ${s.status}${s.failure ? " " + s.failure.check + " @" + s.failure.seq : ""}`))));
}

function badge(status, text) {
  const cls = status === "no live verdict" ? "nolive" : status;
  return h("span", { class: "badge " + cls, text: text || status });
}

function navigate(url) {
  history.pushState(null, "", url);
  route();
}

document.addEventListener("click", (ev) => {
  const a = ev.target.closest("a[data-nav]");
  if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  navigate(a.getAttribute("href"));
});
window.addEventListener("popstate", () => route());

function crumbs(...parts) {
  const c = document.getElementById("crumbs");
  c.replaceChildren();
  parts.forEach((p, i) => {
    if (i) c.append(h("span", { class: "sep", text: "/" }));
    c.append(p);
  });
}

function showError(err) {
  document.getElementById("app").replaceChildren(h("div", { class: "error-box", text: String(err.message || err) }));
}

let teardown = null; // the current page's cleanup

function route() {
  if (teardown) { teardown(); teardown = null; }
  const u = new URL(location.href);
  const m = u.pathname.match(/^\/b\/([^/]+)$/);
  let p;
  if (m) p = bundlePage(decodeURIComponent(m[1]), u);
  else if (u.pathname === "/diff") p = diffPage(u.searchParams.get("a"), u.searchParams.get("b"));
  else p = corpusPage(u);
  p.catch(showError);
}

// ---------- JSON tree ----------

function jsonTree(value, open) {
  return h("div", { class: "jt" }, jsonNode(null, value, open === undefined ? 2 : open));
}

function jsonNode(key, v, open) {
  const k = key === null ? null : h("span", { class: "key", text: JSON.stringify(key) + ": " });
  if (v !== null && typeof v === "object") {
    const arr = Array.isArray(v);
    const entries = arr ? v.map((x, i) => [i, x]) : Object.entries(v);
    const sum = h("summary", null, k, h("span", { class: "meta", text: arr ? `[${entries.length}]` : `{${entries.length}}` }));
    const d = h("details", { open: open > 0 }, sum);
    // Children are built when opened, so a large payload costs nothing until looked at.
    let built = false;
    const build = () => {
      if (built) return;
      built = true;
      for (const [ck, cv] of entries) d.append(jsonNode(arr ? null : ck, cv, open - 1));
    };
    if (open > 0) build();
    d.addEventListener("toggle", build);
    return d;
  }
  let cls = "lit", text = String(v);
  if (typeof v === "string") { cls = "str"; text = JSON.stringify(v); }
  else if (typeof v === "number") cls = "num";
  return h("div", { class: "leaf" }, k, h("span", { class: cls, text }));
}

function payloadView(p) {
  if (!p) return h("div", { class: "muted", text: "(none)" });
  const note = h("div", { class: "muted", text: `${p.size} bytes` + (p.truncated ? `, shown truncated` : "") + ` · ${p.encoding}` });
  if (p.encoding === "json") return h("div", null, note, jsonTree(p.json));
  if (p.encoding === "hex") return h("div", null, note, h("pre", { class: "hex", text: p.text }));
  // Text that is NDJSON or JSON after all (a truncated body) still reads better as lines.
  return h("div", null, note, h("pre", { class: "textbody", text: p.text }));
}

// ---------- corpus page ----------

async function corpusPage(u) {
  crumbs(h("span", { text: "corpus" }));
  const data = await api("/api/bundles");
  const rows = data.bundles;
  const app = document.getElementById("app");
  const state = { sort: "name", dir: 1, q: u.searchParams.get("q") || "", status: "", scenario: "", picked: [] };

  const q = h("input", { type: "search", placeholder: "Filter bundles (name, check, fault…)", value: state.q, id: "corpus-filter" });
  const statusSel = h("select", { id: "corpus-status" }, h("option", { value: "", text: "any status" }),
    ["passed", "failed", "skipped", "not-applicable", "unreadable", "diverged"].map((s) => h("option", { value: s, text: s })));
  const scenarios = [...new Set(rows.map((r) => r.scenario).filter(Boolean))].sort();
  const scenSel = h("select", { id: "corpus-scenario" }, h("option", { value: "", text: "any scenario" }), scenarios.map((s) => h("option", { value: s, text: s })));
  const count = h("span", { class: "count" });
  const compare = h("button", { class: "primary", id: "compare", disabled: true, text: "Compare 2 selected" });
  compare.addEventListener("click", () => navigate(`/diff?a=${encodeURIComponent(state.picked[0])}&b=${encodeURIComponent(state.picked[1])}`));

  const cols = [
    ["", null], ["bundle", "name"], ["scenario", "scenario"], ["#", "iteration"], ["status", "status"], ["failing check", "check"],
    ["replay", "replay"], ["duration", "duration"], ["events", "events"], ["revision", "revision"],
  ];
  const thead = h("thead");
  const tbody = h("tbody");
  const table = h("table", { class: "grid", id: "corpus" }, thead, tbody);

  function header() {
    thead.replaceChildren(h("tr", null, cols.map(([label, key]) => {
      const th = h("th", { class: key ? "sortable" : "" }, label, key && state.sort === key ? h("span", { class: "dir", text: state.dir > 0 ? "▲" : "▼" }) : null);
      if (key) th.addEventListener("click", () => { state.dir = state.sort === key ? -state.dir : 1; state.sort = key; render(); });
      return th;
    })));
  }

  function visible() {
    const needle = state.q.toLowerCase();
    return rows.filter((r) => {
      if (state.scenario && r.scenario !== state.scenario) return false;
      if (state.status === "diverged" ? r.replay !== "diverged" : state.status && r.status !== state.status) return false;
      if (!needle) return true;
      return [r.name, r.scenario, r.fault, r.check, r.status, r.replay, r.revision].join(" ").toLowerCase().includes(needle);
    }).sort((a, b) => {
      const x = a[state.sort] ?? "", y = b[state.sort] ?? "";
      return (typeof x === "number" ? x - y : String(x).localeCompare(String(y))) * state.dir;
    });
  }

  function render() {
    header();
    const vis = visible();
    count.textContent = `${vis.length} of ${rows.length} bundles`;
    tbody.replaceChildren(...vis.map((r) => {
      const cb = h("input", { type: "checkbox", checked: state.picked.includes(r.id), title: "select two to compare" });
      cb.addEventListener("change", () => {
        state.picked = state.picked.filter((x) => x !== r.id);
        if (cb.checked) state.picked.push(r.id);
        while (state.picked.length > 2) state.picked.shift();
        render();
      });
      const link = `/b/${encodeURIComponent(r.id)}` + (r.seq ? `?seq=${r.seq}` : "");
      return h("tr", { class: r.status === "failed" || r.status === "unreadable" ? "row-failed" : "", dataset: { id: r.id } },
        h("td", null, cb),
        h("td", null, h("a", { href: link, "data-nav": true, text: r.name }), r.fault ? h("span", { class: "muted", text: "  fault " + r.fault }) : null),
        h("td", { text: r.scenario }),
        h("td", { class: "num", text: r.iteration || "" }),
        h("td", null, badge(r.status)),
        h("td", { class: "mono" }, r.check ? h("span", null, r.check, h("span", { class: "muted", text: ` @${r.seq}` })) : r.error ? h("span", { class: "muted", title: r.error, text: r.error.slice(0, 60) }) : ""),
        h("td", null, r.replay ? badge(r.replay) : ""),
        h("td", { class: "num", text: ms(r.duration) }),
        h("td", { class: "num", text: r.events }),
        h("td", { class: "mono", text: (r.revision || "").slice(0, 12) + (r.dirty ? "*" : "") }));
    }));
    compare.disabled = state.picked.length !== 2;
  }

  q.addEventListener("input", () => { state.q = q.value; render(); });
  statusSel.addEventListener("change", () => { state.status = statusSel.value; render(); });
  scenSel.addEventListener("change", () => { state.scenario = scenSel.value; render(); });

  const rateRows = [];
  for (const r of data.rates) {
    const pct = Math.round(r.rate * 100);
    rateRows.push(h("tr", { class: r.check ? "check" : "" },
      h("td", { class: r.check ? "mono" : "", text: r.check || r.scenario }),
      h("td", { class: "num", text: `${r.failed}/${r.runs}` }),
      h("td", null, h("span", { class: "bar" }, h("span", { style: `width:${pct}%` })), `${pct}%`)));
  }
  const aside = h("aside", null,
    h("h3", { text: "Failure rate across runs" }),
    h("table", { class: "grid rates", id: "rates" }, h("thead", null, h("tr", null, h("th", { text: "scenario / check" }), h("th", { text: "failed" }), h("th", { text: "rate" }))), h("tbody", null, rateRows)));

  app.replaceChildren(h("div", { class: "toolbar" }, q, statusSel, scenSel, compare, count),
    h("div", { class: "corpus" }, h("div", { class: "table-wrap" }, table), aside));
  render();
}

// ---------- bundle page ----------

const ROW = 20, PAGE = 200;

async function bundlePage(id, u) {
  const b = await api(`/api/bundle/${encodeURIComponent(id)}`);
  const app = document.getElementById("app");
  crumbs(h("a", { href: "/", "data-nav": true, text: "corpus" }), h("span", { text: b.row.name }));
  const ix = b.index;
  const failSeq = b.verdict.failure ? b.verdict.failure.seq : null;
  const failT = b.verdict.failure ? b.verdict.failure.t : null;
  const page = { id, b, ix, selected: null, cursorT: null, obsIndex: -1, tab: "details", detail: null };

  // --- summary and verdict ---
  const m = b.header.manifest || {};
  const others = await api("/api/bundles").then((c) => c.bundles.filter((r) => r.id !== id && r.scenario === b.row.scenario)).catch(() => []);
  const cmp = h("select", { id: "compare-with" }, h("option", { value: "", text: "compare with…" }),
    others.map((r) => h("option", { value: r.id, text: `${r.name} (${r.status})` })));
  cmp.addEventListener("change", () => { if (cmp.value) navigate(`/diff?a=${encodeURIComponent(cmp.value)}&b=${encodeURIComponent(id)}`); });
  const summary = h("div", { class: "summary" },
    h("span", { class: "title", text: b.row.name, title: b.row.path }),
    badge(b.verdict.status),
    suiteBadges(b.verdict),
    b.row.replay ? badge(b.row.replay) : null,
    h("span", { class: "facts" },
      // Two runs' bundles may share a name (idle-1): the file and the time
      // the run started tell them apart.
      h("span", null, "file ", h("b", { class: "mono", id: "bundle-path", text: b.row.path })),
      b.header.started ? h("span", null, "started ", h("b", { id: "bundle-started", text: b.header.started })) : null,
      h("span", null, "scenario ", h("b", { text: b.row.scenario || "—" })),
      m.options && m.options.fault ? h("span", null, "fault ", h("b", { text: m.options.fault })) : null,
      h("span", null, "duration ", h("b", { text: ms(ix.lastT) })),
      h("span", null, "events ", h("b", { text: b.events })),
      m.revision ? h("span", null, "revision ", h("b", { class: "mono", text: m.revision.slice(0, 12) + (m.dirty ? "*" : "") })) : null,
      h("span", null, h("b", { text: b.header.tool })),
      ix.truncated ? h("span", { class: "badge failed", text: "truncated" }) : null),
    h("span", { class: "right" }, others.length ? cmp : null));
  let verdictBox = null;
  const f = b.verdict.failure;
  if (f) {
    verdictBox = h("div", { class: "verdict", id: "verdict" },
      h("span", { class: "k", text: "failed" }), h("span", null, h("span", { class: "check", text: f.check }), " — ", f.message, "  ",
        h("a", { href: `?seq=${f.seq}`, id: "verdict-seq", text: `@seq ${f.seq}`, onclick: (e) => { e.preventDefault(); focusSeq(f.seq); } }), h("span", { class: "muted", text: `  t=${ms(f.t)}` })),
      f.expected ? [h("span", { class: "k", text: "expected" }), h("span", { class: "mono", text: f.expected })] : null,
      f.seen ? [h("span", { class: "k", text: "seen" }), h("span", { class: "mono", text: f.seen })] : null,
      f.diff ? [h("span", { class: "k", text: "diff" }), h("pre", { text: f.diff })] : null,
      // Every other suite that failed, with its own failing check.
      (b.verdict.suites || []).filter((s) => s.failure && (s.failure.check !== f.check || s.failure.seq !== f.seq)).flatMap((s) => [
        h("span", { class: "k", text: s.suite }),
        h("span", { class: "also-failed", dataset: { suite: s.suite } }, h("span", { class: "check", text: s.failure.check }), " — ", s.failure.message, "  ", seqLink(s.failure.seq, `@seq ${s.failure.seq}`),
          s.failure.seen ? h("span", { class: "muted", text: `  seen: ${s.failure.seen}` }) : null)]),
      b.replayDiff ? [h("span", { class: "k", text: "diverged" }), h("pre", { text: b.replayDiff })] : null);
  } else if (b.verdict.reason) {
    // The scenario does not apply to the run's provider: nothing was
    // verified, and the box says why rather than showing a pass.
    verdictBox = h("div", { class: "verdict na", id: "verdict" },
      h("span", { class: "k", text: "not applicable" }),
      h("span", { id: "verdict-reason" }, "to ", h("b", { text: b.verdict.provider || "the provider" }), ": ", b.verdict.reason),
      h("span", { class: "k", text: "verified" }), h("span", { text: "nothing: this run neither passed nor failed" }),
      b.replayDiff ? [h("span", { class: "k", text: "diverged" }), h("pre", { text: b.replayDiff })] : null);
  } else if (b.replayDiff) {
    verdictBox = h("div", { class: "verdict" }, h("span", { class: "k", text: "diverged" }), h("pre", { text: b.replayDiff }));
  }

  // --- waterfall ---
  const wf = new Waterfall(b, {
    onPick: (item) => pickItem(item),
    onCursor: (t) => setCursorT(t),
  });

  // --- event list ---
  const filters = {
    q: h("input", { type: "search", placeholder: "Search: words, or ~b body, ~k kind, ~j path=value, ~e (docs/filter.md)", id: "ev-q", title: "a filter expression: words search summaries and payloads; ~b RE, ~c 4xx, ~u RE, ~k ws.message, ~rpc RE, ~j a.b=v, ~seq A-B, ~e, !, &, |" }),
    kind: select("kind", "any kind", [...new Set(ix.kinds.map((k) => k.split(".")[0]))].concat(ix.kinds)),
    conn: select("conn", "any connection", ix.conns),
    method: select("method", "any method", ix.methods),
    status: select("status", "any status", ["2xx", "3xx", "4xx", "5xx"].concat([...new Set(ix.http.map((x) => String(x.status || "")).filter(Boolean))].sort())),
    outcome: select("outcome", "any outcome", [...new Set(ix.calls.map((c) => c.outcome))].sort()),
  };
  const count = h("span", { class: "count", id: "ev-count" });
  const list = new EventList(id, {
    failSeq,
    onSelect: (ev) => selectEvent(ev),
    onCount: (n, total) => { count.textContent = n === total ? `${total} events` : `${n} of ${total} events`; },
  });
  let debounce = 0;
  const applyFilters = () => {
    const p = new URLSearchParams();
    for (const [k, el] of Object.entries(filters)) if (el.value) p.set(k, el.value);
    const showError = (msg) => { qError.textContent = msg || ""; qError.hidden = !msg; };
    // The expression is checked first: one that does not parse says where,
    // and the list keeps what it showed.
    api("/api/filter?q=" + encodeURIComponent(filters.q.value)).then((c) => {
      if (!c.ok) { showError(c.error); return; }
      showError("");
      list.setFilter(p.toString()).catch((err) => showError(err.message));
    }, (err) => showError(err.message));
  };
  const qError = h("div", { class: "error-box q-error", id: "ev-q-error" });
  qError.hidden = true;
  filters.q.addEventListener("input", () => { clearTimeout(debounce); debounce = setTimeout(applyFilters, 150); });
  for (const k of ["kind", "conn", "method", "status", "outcome"]) filters[k].addEventListener("change", applyFilters);

  // --- details and projection pane ---
  const tabDetails = h("button", { class: "active", id: "tab-details", text: "Details" });
  const tabProj = h("button", { id: "tab-projection", text: `Projection (${b.observations.length})` });
  const paneBody = h("div", { class: "pane-body", id: "pane" });
  tabDetails.addEventListener("click", () => setTab("details"));
  tabProj.addEventListener("click", () => setTab("projection"));
  function setTab(t) {
    page.tab = t;
    tabDetails.classList.toggle("active", t === "details");
    tabProj.classList.toggle("active", t === "projection");
    renderPane();
  }

  const resizer = h("div", { class: "resizer", title: "drag to resize the waterfall" });
  resizer.addEventListener("mousedown", (e) => {
    const y0 = e.clientY, h0 = wf.height;
    const move = (ev) => wf.setHeight(h0 + ev.clientY - y0);
    const up = () => { window.removeEventListener("mousemove", move); window.removeEventListener("mouseup", up); };
    window.addEventListener("mousemove", move);
    window.addEventListener("mouseup", up);
  });

  // --- error flags: what went wrong, whichever check it decides ---
  const flags = ix.flags || [];
  const fb = b.firstBad;
  const flagBox = flags.length || fb ? h("details", { class: "flags", id: "flags", open: flags.length <= 12 },
    h("summary", { text: `${flags.length} error flag${flags.length === 1 ? "" : "s"}: ` + [...new Set(flags.map((f) => f.kind))].join(", ") }),
    fb ? h("div", { class: "first-bad", id: "first-bad", dataset: { seq: fb.seq } }, h("span", { class: "flag-kind", text: "first bad state" }), " ",
      seqLink(fb.seq, `@seq ${fb.seq}`), ` (${fb.source}): ${fb.check} was already failing with the value it failed with, `, seqLink(fb.decided, `decided @seq ${fb.decided}`)) : null,
    h("ul", {}, flags.map((f) => h("li", { class: "flag", dataset: { kind: f.kind, seq: f.seq } },
      h("span", { class: "flag-kind", text: f.kind }), " ", seqLink(f.seq, `@seq ${f.seq}`), " ", h("span", { class: "muted", text: f.conn || "" }), " ", f.what)))) : null;

  app.replaceChildren(h("div", { class: "bundle" }, summary, verdictBox, flagBox, wf.el, resizer,
    h("div", { class: "split" },
      h("div", { class: "events" }, h("div", { class: "toolbar" }, filters.q, filters.kind, filters.conn, filters.method, filters.status, filters.outcome, count), qError, list.el),
      h("div", { class: "pane" }, h("div", { class: "tabs" }, tabDetails, tabProj), paneBody))));
  wf.mount();
  teardown = () => { wf.destroy(); list.destroy(); window.removeEventListener("keydown", onKey); };

  function select(name, any, values) {
    return h("select", { id: "ev-" + name, title: name }, h("option", { value: "", text: any }), values.map((v) => h("option", { value: v, text: v })));
  }

  async function focusSeq(seq) {
    await list.scrollToSeq(seq, true);
  }

  async function selectEvent(ev) {
    page.selected = { type: "event", seq: ev.seq };
    wf.setSelected(ev);
    setCursorT(ev.t, true);
    const url = new URL(location.href);
    url.searchParams.set("seq", ev.seq);
    url.hash = "";
    history.replaceState(null, "", url);
    page.detail = { kind: "event", ev, data: null };
    if (page.tab !== "details") setTab("details"); else renderPane();
    try {
      const d = await api(`/api/bundle/${encodeURIComponent(id)}/event/${ev.seq}`);
      if (page.detail && page.detail.ev === ev) { page.detail.data = d; renderPane(); }
    } catch (err) { paneBody.replaceChildren(h("div", { class: "error-box", text: err.message })); }
  }

  async function showCall(n) {
    const call = ix.calls[n];
    page.detail = { kind: "call", call, data: null };
    wf.setSelected({ call: n });
    if (page.tab !== "details") setTab("details"); else renderPane();
    try {
      const d = await api(`/api/bundle/${encodeURIComponent(id)}/call/${n}`);
      if (page.detail && page.detail.call === call) { page.detail.data = d; renderPane(); }
    } catch (err) { paneBody.replaceChildren(h("div", { class: "error-box", text: err.message })); }
  }

  function pickItem(item) {
    if (item.call !== undefined) { showCall(item.call); list.scrollToSeq(ix.calls[item.call].seq, false); }
    else if (item.seq !== undefined) list.scrollToSeq(item.seq, true);
  }

  function setCursorT(t, fromList) {
    page.cursorT = t;
    wf.setCursor(t);
    // The observation in effect at t: the last one at or before it.
    let i = -1;
    for (let k = 0; k < b.observations.length && b.observations[k].t <= t; k++) i = k;
    if (i !== page.obsIndex) {
      page.obsIndex = i;
      if (page.tab === "projection") renderPane();
    }
    if (!fromList && page.tab !== "projection") setTab("projection");
  }

  function stepObs(d) {
    const n = b.observations.length;
    if (!n) return;
    const i = Math.max(0, Math.min(n - 1, page.obsIndex + d));
    page.obsIndex = -2;
    setCursorT(b.observations[i].t, true);
    wf.reveal(b.observations[i].t);
  }

  function onKey(e) {
    if (e.target.closest("input, select, textarea")) return;
    if (e.key === "]") stepObs(1);
    else if (e.key === "[") stepObs(-1);
    else if (e.key === "j" || e.key === "ArrowDown") { list.move(1); e.preventDefault(); }
    else if (e.key === "k" || e.key === "ArrowUp") { list.move(-1); e.preventDefault(); }
  }
  window.addEventListener("keydown", onKey);

  function renderPane() {
    if (page.tab === "projection") return renderProjection();
    const d = page.detail;
    if (!d) { paneBody.replaceChildren(h("div", { class: "muted", text: "Select an event in the list or a span on the waterfall." })); return; }
    if (d.kind === "event") return paneBody.replaceChildren(eventDetail(d.ev, d.data));
    paneBody.replaceChildren(callDetail(d.call, d.data));
  }

  function seqLink(seq, text) {
    return h("a", { href: `?seq=${seq}`, text: text || `seq ${seq}`, onclick: (e) => { e.preventDefault(); focusSeq(seq); } });
  }

  function eventDetail(ev, d) {
    const out = h("div", { id: "detail-event", dataset: { seq: ev.seq, loaded: d ? "yes" : "no" } });
    out.append(h("div", { class: "detail-title" }, h("span", { class: kindClass(ev.kind), text: ev.kind }), ev.conn ? h("span", { class: "pill", text: ev.conn }) : null,
      h("span", { class: "muted", text: `seq ${ev.seq} · t=${ms(ev.t)}` }), ev.seq === failSeq ? badge("failed", "decided the verdict") : null,
      ev.seq === failSeq && b.firstBad ? h("span", { class: "first-bad-link" }, " first bad state ", seqLink(b.firstBad.seq, `@seq ${b.firstBad.seq}`)) : null,
      b.firstBad && ev.seq === b.firstBad.seq ? badge("failed", `first bad state: ${b.firstBad.check} decided at seq ${b.firstBad.decided}`) : null));
    if (ev.rpc) out.append(h("div", { class: "mono", text: ev.rpc }));
    const links = h("div", { class: "links" });
    for (const c of ev.calls || []) {
      const call = ix.calls[c];
      links.append(h("a", { href: "#", class: "call-link", dataset: { call: c }, text: `call #${call.id} ${call.method} (${call.outcome})`, onclick: (e) => { e.preventDefault(); showCall(c); } }));
    }
    if (ev.exchange >= 0) {
      const x = ix.http[ev.exchange];
      links.append(h("span", null, `exchange ${x.conn}: ${x.method} ${x.url} → ${x.status || "…"} `, seqLink(x.seq, "request"), x.endSeq ? [" ", seqLink(x.endSeq, "end")] : null));
    }
    if (links.childNodes.length) out.append(h("div", { class: "section", text: "related" }), links);
    if (!d) { out.append(h("div", { class: "muted", text: "loading…" })); return out; }
    const kv = [];
    for (const k of ["dir", "type", "name", "method", "url", "status", "code", "reason", "size", "truncated", "err"]) {
      if (d[k] !== undefined && d[k] !== "" && d[k] !== 0 && d[k] !== false) kv.push(h("span", { class: "k", text: k }), h("span", { class: "v", text: String(d[k]) }));
    }
    if (kv.length) out.append(h("div", { class: "kv" }, kv));
    if (d.err) out.append(h("div", { class: "cause", text: d.err }));
    if (d.header && Object.keys(d.header).length) {
      out.append(h("div", { class: "section", text: "headers" }), h("div", { class: "kv" },
        Object.keys(d.header).sort().map((k) => [h("span", { class: "k", text: k }), h("span", { class: "v", text: d.header[k].join(", ") })])));
    }
    if (d.attrs) out.append(h("div", { class: "section", text: "attrs" }), jsonTree(d.attrs, 1));
    if (d.body) out.append(h("div", { class: "section", text: "body" }), payloadView(d.body));
    return out;
  }

  function callDetail(c, d) {
    const out = h("div", { id: "detail-call", dataset: { call: c.index, loaded: d ? "yes" : "no" } });
    out.append(h("div", { class: "detail-title" }, h("span", { class: "k-ws", text: c.method }), h("span", { class: "pill", text: `${c.conn} #${c.id}` }),
      h("span", { class: "outcome-" + (c.causeInterrupt ? "unknown" : c.outcome), text: c.causeInterrupt ? "interrupted" : c.outcome }), c.interrupted ? h("span", { class: "badge skipped", text: "interrupted by client" }) : null));
    out.append(h("div", { class: "kv" },
      h("span", { class: "k", text: "request" }), h("span", { class: "v" }, seqLink(c.seq), ` t=${ms(c.t)}`),
      h("span", { class: "k", text: "end" }), h("span", { class: "v" }, c.endSeq ? [seqLink(c.endSeq), ` t=${ms(c.endT)} · ${ms(c.endT - c.t)}`] : "never ended"),
      h("span", { class: "k", text: "stream" }), h("span", { class: "v", text: `${c.chunks} chunk(s), ${c.acks} ack(s)` }),
      c.threadId ? [h("span", { class: "k", text: "thread" }), h("span", { class: "v", text: c.threadId })] : null,
      c.reason ? [h("span", { class: "k", text: "reason" }), h("span", { class: "v", text: c.reason })] : null));
    if (!d) { out.append(h("div", { class: "muted", text: "loading…" })); return out; }
    out.append(h("div", { class: "section", text: "payload" }), h("div", { id: "call-payload" }, payloadView(d.payload)));
    if (d.fails || d.dies || d.interrupts) {
      out.append(h("div", { class: "section", text: "cause" }));
      for (const x of d.fails || []) out.append(h("div", { class: "cause" }, h("b", { text: "Fail " }), jsonTree(x, 4)));
      for (const x of d.dies || []) out.append(h("div", { class: "cause" }, h("b", { text: "Die " }), jsonTree(x, 4)));
      for (const x of d.interrupts || []) out.append(h("div", { class: "cause", text: "Interrupt " + x }));
    }
    out.append(h("div", { class: "section", text: "exit" }), payloadView(d.exit));
    if (d.chunkValues && d.chunkValues.length) {
      out.append(h("div", { class: "section" }, `chunks (first ${d.chunkValues.length})`));
      for (const ch of d.chunkValues) out.append(h("details", null, h("summary", null, seqLink(ch.seq), ` t=${ms(ch.t)} · ${ch.values.size} bytes`), payloadView(ch.values)));
    }
    return out;
  }

  async function renderProjection() {
    const obs = b.observations;
    const i = page.obsIndex;
    const prev = h("button", { id: "obs-prev", text: "◀ prev", title: "previous observation ([)", disabled: i <= 0, onclick: () => stepObs(-1) });
    const next = h("button", { id: "obs-next", text: "next ▶", title: "next observation (])", disabled: i >= obs.length - 1, onclick: () => stepObs(1) });
    const head = h("div", { class: "proj-head" }, prev, next);
    if (!obs.length) {
      paneBody.replaceChildren(h("div", { id: "projection" }, h("div", { class: "muted", text: "Replay observed no projection of the parent thread in this bundle." })));
      return;
    }
    if (i < 0) {
      head.append(h("span", { class: "where", text: `t=${ms(page.cursorT)}: before the first observation` }));
      paneBody.replaceChildren(h("div", { id: "projection", dataset: { obs: -1 } }, head, h("div", { class: "muted", text: "Pick a later point on the timeline, or step with next." })));
      return;
    }
    const o = obs[i];
    head.append(h("span", { class: "where" }, `observation ${i + 1}/${obs.length} · `, seqLink(o.seq), ` · t=${ms(o.t)} · ${o.source}`));
    const box = h("div", { id: "projection", dataset: { obs: i } }, head, h("div", { class: "muted", text: "loading…" }));
    paneBody.replaceChildren(box);
    const p = await api(`/api/bundle/${encodeURIComponent(id)}/projection?obs=${i}`);
    if (page.obsIndex !== i || page.tab !== "projection") return;
    box.replaceChildren(head, projectionView(p));
  }

  function projectionView(p) {
    const st = p.state, pv = p.previous;
    const out = h("div");
    const changes = p.observation.changes.length ? p.observation.changes : ["no change since the previous observation"];
    out.append(h("ul", { class: "changes", id: "changes" }, changes.map((c) => h("li", { text: c }))));
    const prevRuns = new Map((pv ? pv.runs : []).map((r) => [r.id, r]));
    out.append(h("div", { class: "section", text: `runs (${st.runs.length})` }), h("table", { class: "state", id: "state-runs" },
      h("tr", null, h("th", { text: "#" }), h("th", { text: "status" }), h("th", { text: "id" })),
      st.runs.map((r) => h("tr", { class: pv && (!prevRuns.has(r.id) || prevRuns.get(r.id).status !== r.status) ? "changed" : "" },
        h("td", { text: r.ordinal }), h("td", { text: r.status }), h("td", { class: "mono muted", text: r.id })))));
    const prevSubs = new Map((pv ? pv.subagents : []).map((s) => [s.id, s]));
    out.append(h("div", { class: "section", text: `subagents (${st.subagents.length})` }), st.subagents.length ? h("table", { class: "state" },
      h("tr", null, h("th", { text: "origin" }), h("th", { text: "status" }), h("th", { text: "delivery" }), h("th", { text: "result" })),
      st.subagents.map((s) => {
        const o = prevSubs.get(s.id);
        const changed = pv && (!o || o.status !== s.status || o.delivery !== s.delivery || o.result !== s.result);
        return h("tr", { class: changed ? "changed" : "" }, h("td", { text: s.origin }), h("td", { text: s.status }), h("td", { text: s.delivery || "—" }),
          h("td", { class: "mono", text: s.hasResult ? s.result : "—" }));
      })) : h("div", { class: "muted", text: "none" }));
    const pm = pv ? pv.messages.length : 0;
    out.append(h("div", { class: "section", text: `messages (${st.messages.length})` }),
      h("div", { id: "state-messages" }, st.messages.map((msg, k) => h("div", { class: "msg" + (pv && k >= pm ? " changed" : "") }, h("span", { class: "role", text: msg.role }), msg.text))));
    const pi = pv ? pv.turnItems.length : 0;
    out.append(h("div", { class: "section", text: `turn items (${st.turnItems.length})` }),
      h("div", { class: "chips" }, st.turnItems.map((it, k) => h("span", { class: `chip ${it.type}` + (pv && k >= pi ? " changed" : ""), title: it.text || "", text: it.type + (it.outcome ? ` (${it.outcome})` : "") }))));
    out.append(h("div", { class: "section", text: `pending background tasks (${st.pending.length})` }),
      st.pending.length ? h("div", null, st.pending.map((x) => h("pre", { class: "textbody", text: x }))) : h("div", { class: "muted", text: "none" }));
    return out;
  }

  // --- open: the seq asked for, else the failing event, else the start ---
  const hashSeq = (location.hash.match(/seq=(\d+)/) || [])[1];
  const want = u.searchParams.get("seq") ?? hashSeq;
  const start = want !== null && want !== undefined ? Number(want) : failSeq !== null ? failSeq : 0;
  await list.ready;
  await list.scrollToSeq(start, true);
  if (failT !== null) wf.reveal(failT);
}

// ---------- virtualised event list ----------

class EventList {
  constructor(id, opts) {
    this.id = id;
    this.opts = opts;
    this.filter = "";
    this.pages = new Map(); // page number -> events (or a promise)
    this.matched = 0;
    this.total = 0;
    this.selectedSeq = null;
    this.el = h("div", { class: "list", id: "events", tabindex: 0 });
    this.spacer = h("div", { class: "spacer" });
    this.rows = new Map(); // "pos:seq" -> row element
    this.el.append(this.spacer);
    this.el.addEventListener("scroll", () => this.render());
    this.el.addEventListener("click", (e) => {
      const row = e.target.closest(".row");
      if (row) this.selectPos(Number(row.dataset.pos));
    });
    this.gen = 0;
    this.el.dataset.filter = "";
    this.ready = this.load(0);
  }

  destroy() { this.gen++; }

  url(from, limit, extra) {
    return `/api/bundle/${encodeURIComponent(this.id)}/events?from=${from}&limit=${limit}` + (this.filter ? "&" + this.filter : "") + (extra || "");
  }

  async load(p) {
    if (this.pages.has(p)) return this.pages.get(p);
    const gen = this.gen;
    const pr = api(this.url(p * PAGE, PAGE)).then((r) => {
      if (gen !== this.gen) return null;
      this.pages.set(p, r.events);
      this.setCounts(r.matched, r.total);
      this.render();
      return r.events;
    });
    this.pages.set(p, pr);
    return pr;
  }

  setCounts(matched, total) {
    if (matched !== this.matched || total !== this.total) {
      this.matched = matched;
      this.total = total;
      this.spacer.style.height = matched * ROW + "px";
      this.opts.onCount(matched, total);
    }
  }

  async setFilter(f) {
    this.filter = f;
    const gen = ++this.gen;
    delete this.el.dataset.filter;
    this.pages = new Map();
    this.matched = -1;
    this.spacer.replaceChildren();
    this.rows.clear();
    await this.load(0);
    if (this.matched === 0) this.spacer.replaceChildren(h("div", { class: "empty", text: "No event matches these filters." }));
    if (this.selectedSeq !== null) {
      // Keep the selected event in view when it still matches.
      const r = await api(this.url(0, 1, `&around=${this.selectedSeq}`));
      if (gen === this.gen && r.at >= 0) this.el.scrollTop = Math.max(0, r.at * ROW - this.el.clientHeight / 2);
    } else this.el.scrollTop = 0;
    if (gen !== this.gen) return; // a newer filter took over
    this.render();
    this.el.dataset.filter = f; // the list shows this filter now
  }

  eventAt(pos) {
    const pg = this.pages.get(Math.floor(pos / PAGE));
    return Array.isArray(pg) ? pg[pos % PAGE] : undefined;
  }

  // render shows the rows in view (and a few around them). Rows stay the same
  // elements while they show the same event, so scrolling touches only the
  // rows that come and go.
  render() {
    const top = this.el.scrollTop, height = this.el.clientHeight || 400;
    const first = Math.max(0, Math.floor(top / ROW) - 10), last = Math.min(this.matched, Math.ceil((top + height) / ROW) + 10);
    const keep = new Set();
    for (let pos = first; pos < last; pos++) {
      const ev = this.eventAt(pos);
      if (!ev) { this.load(Math.floor(pos / PAGE)); continue; }
      const key = pos + ":" + ev.seq;
      keep.add(key);
      let row = this.rows.get(key);
      if (!row) {
        row = h("div", { class: "row", dataset: { pos, seq: ev.seq } },
          h("span", { class: "seq", text: ev.seq }), h("span", { class: "t", text: ms(ev.t) }),
          h("span", { class: "kind " + kindClass(ev.kind), text: ev.kind }), h("span", { class: "conn", text: ev.conn || "" }),
          h("span", { class: "sum" }, ev.flags ? h("span", { class: "flag-mark", title: ev.flags.join(", "), text: "⚑ " + ev.flags.join(" ") }) : null,
            ev.rpc ? h("span", { class: "rpc", text: ev.rpc }) : null, ev.summary));
        if (ev.flags) row.classList.add("flagged");
        row.style.top = pos * ROW + "px";
        this.rows.set(key, row);
        this.spacer.append(row);
      }
      row.classList.toggle("failing", ev.seq === this.opts.failSeq);
      row.classList.toggle("selected", ev.seq === this.selectedSeq);
    }
    for (const [key, row] of this.rows) {
      if (!keep.has(key)) { row.remove(); this.rows.delete(key); }
    }
  }

  async selectPos(pos) {
    const p = Math.floor(pos / PAGE);
    await this.load(p);
    const ev = this.eventAt(pos);
    if (!ev) return;
    this.selectedSeq = ev.seq;
    this.selectedPos = pos;
    const top = pos * ROW;
    if (top < this.el.scrollTop || top + ROW > this.el.scrollTop + this.el.clientHeight) this.el.scrollTop = Math.max(0, top - this.el.clientHeight / 2);
    this.render();
    this.opts.onSelect(ev);
  }

  move(d) {
    if (this.selectedPos === undefined) return;
    const pos = Math.max(0, Math.min(this.matched - 1, this.selectedPos + d));
    this.selectPos(pos);
  }

  // scrollToSeq brings seq (or the first matched event after it) into the
  // middle of the list; select also selects it.
  async scrollToSeq(seq, select) {
    const r = await api(this.url(0, 1, `&around=${seq}`));
    this.setCounts(r.matched, r.total);
    if (r.at < 0 || r.matched === 0) return;
    this.el.scrollTop = Math.max(0, r.at * ROW - this.el.clientHeight / 2 + ROW);
    await this.load(Math.floor(r.at / PAGE));
    this.render();
    if (select) await this.selectPos(r.at);
  }
}

// ---------- waterfall ----------

const COLORS = {
  success: "#2da44e", failure: "#cf222e", interrupted: "#6e7781", cut: "#6e7781", defect: "#cf222e", unknown: "#8c959f", open: "#bf8700",
  http: "#218bff", http4: "#fa4549", proc: "#6e7781", ready: "#8c959f", ws: "#a475f9",
  gate: "#fb8500", mark: "#1a7f37", fail: "#cf222e", cursor: "#0969da", obs: "#8250df", grid: "#eaeef2", text: "#57606a",
};

class Waterfall {
  constructor(b, opts) {
    this.b = b;
    this.ix = b.index;
    this.opts = opts;
    this.end = Math.max(this.ix.lastT, 1);
    this.t0 = 0;
    this.t1 = this.end * 1.02;
    this.cursor = null;
    this.selected = null;
    this.failT = b.verdict.failure ? b.verdict.failure.t : null;
    this.failSeq = b.verdict.failure ? b.verdict.failure.seq : null;
    this.labelW = 96;
    this.lanes = this.layout();
    this.height = Math.min(22 + this.lanes.reduce((s, l) => s + l.h, 0) + 6, 300);
    this.canvas = h("canvas", { id: "waterfall" });
    const tools = h("div", { class: "wf-tools" },
      h("button", { text: "+", title: "zoom in (wheel)", onclick: () => this.zoom(0.5) }),
      h("button", { text: "−", title: "zoom out", onclick: () => this.zoom(2) }),
      h("button", { text: "fit", title: "show the whole run (double-click)", onclick: () => this.fit() }));
    this.el = h("div", { class: "waterfall" }, tools, this.canvas);
    this.hits = [];
    this.canvas.waterfall = this; // for scripts and tests: spanRect finds where a call is drawn
  }

  // layout packs spans into rows: one lane per channel, spans that overlap
  // in time on separate rows (at most maxRows per lane).
  layout() {
    const ix = this.ix, lanes = [];
    const pack = (items, maxRows) => {
      const ends = [];
      for (const it of items) {
        let r = ends.findIndex((e) => e <= it.t);
        if (r < 0) { r = ends.length < maxRows ? ends.length : ends.indexOf(Math.min(...ends)); if (r === ends.length) ends.push(0); }
        ends[r] = it.endT || this.end;
        it.row = r;
      }
      return Math.max(ends.length, 1);
    };
    // A lane per process: the server, each provider process, with the
    // calls of its stdio (JSON-RPC, stream-json, a Codex app-server's turns
    // and items) under it.
    for (const conn of [...new Set(ix.procs.map((p) => p.conn))]) {
      const items = ix.procs.filter((p) => p.conn === conn).map((p) => ({ type: "proc", t: p.t, endT: p.endT, p }));
      lanes.push({ name: conn, items, rows: pack(items, 3) });
      const calls = ix.calls.filter((c) => c.conn === conn).map((c) => ({ type: "call", t: c.t, endT: c.endT, c }));
      if (calls.length) lanes.push({ name: "  rpc", items: calls, rows: pack(calls, 6) });
    }
    // The client's HTTP, then MCP's (exchanges that carry JSON-RPC) apart.
    for (const [name, side] of [["http", ""], ["mcp", "mcp"]]) {
      const items = ix.http.map((x, i) => ({ type: "http", t: x.t, endT: x.endT, x, i })).filter((it) => (it.x.side || "") === side);
      if (items.length) lanes.push({ name, items, rows: pack(items, 4) });
    }
    // A CLI's model calls (Anthropic's Messages API, OpenAI's Responses API).
    const model = ix.calls.filter((c) => c.protocol === "anthropic" || c.protocol === "openai").map((c) => ({ type: "call", t: c.t, endT: c.endT, c }));
    if (model.length) lanes.push({ name: "model", items: model, rows: pack(model, 4) });
    for (const w of ix.ws) {
      lanes.push({ name: w.conn, items: [{ type: "ws", t: w.t, endT: w.closeT, w, row: 0 }], rows: 1 });
      const calls = ix.calls.filter((c) => c.conn === w.conn).map((c) => ({ type: "call", t: c.t, endT: c.endT, c }));
      if (calls.length) lanes.push({ name: "  rpc", items: calls, rows: pack(calls, 6) });
    }
    const gate = ix.points.filter((p) => p.kind.startsWith("gate.")), marks = ix.points.filter((p) => p.kind === "mark"),
      other = ix.points.filter((p) => !p.kind.startsWith("gate.") && p.kind !== "mark" && p.kind !== "proc.signal");
    if (gate.length) lanes.push({ name: "gate", items: gate.map((p) => ({ type: "point", t: p.t, p, row: 0 })), rows: 1 });
    if (marks.length) lanes.push({ name: "marks", items: marks.map((p) => ({ type: "point", t: p.t, p, row: 0 })), rows: 1 });
    if (this.b.observations.length) lanes.push({ name: "thread", items: this.b.observations.map((o, i) => ({ type: "obs", t: o.t, o, i, row: 0 })), rows: 1 });
    if (other.length) lanes.push({ name: "run", items: other.map((p) => ({ type: "point", t: p.t, p, row: 0 })), rows: 1 });
    for (const l of lanes) l.h = l.rows * 14 + 6;
    return lanes;
  }

  mount() {
    const c = this.canvas;
    this.ro = new ResizeObserver(() => this.draw());
    this.ro.observe(this.el);
    let drag = null;
    c.addEventListener("wheel", (e) => {
      e.preventDefault();
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        const d = (e.shiftKey ? e.deltaY : e.deltaX) / this.plotW() * (this.t1 - this.t0);
        this.setRange(this.t0 + d, this.t1 + d);
      } else this.zoom(Math.exp(e.deltaY * 0.002), this.tAt(e.offsetX));
    }, { passive: false });
    c.addEventListener("mousedown", (e) => { drag = { x: e.clientX, t0: this.t0, t1: this.t1, moved: false }; });
    this.onMove = (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      if (Math.abs(dx) > 3) { drag.moved = true; c.classList.add("dragging"); }
      const d = -dx / this.plotW() * (drag.t1 - drag.t0);
      if (drag.moved) this.setRange(drag.t0 + d, drag.t1 + d);
    };
    this.onUp = (e) => {
      if (!drag) return;
      const moved = drag.moved;
      drag = null;
      c.classList.remove("dragging");
      if (moved || e.target !== c) return;
      const hit = this.hitAt(e.offsetX, e.offsetY);
      if (hit && hit.type === "call") this.opts.onPick({ call: hit.c.index });
      else if (hit && hit.type === "http") this.opts.onPick({ seq: hit.x.seq });
      else if (hit && hit.type === "point") this.opts.onPick({ seq: hit.p.seq });
      else if (hit && hit.type === "proc") this.opts.onPick({ seq: hit.p.seq });
      else if (hit && hit.type === "ws") this.opts.onPick({ seq: hit.w.seq });
      if (e.offsetX > this.labelW && (!hit || hit.type === "obs")) this.opts.onCursor(Math.max(0, this.tAt(e.offsetX)));
    };
    window.addEventListener("mousemove", this.onMove);
    window.addEventListener("mouseup", this.onUp);
    c.addEventListener("dblclick", () => this.fit());
    const tip = document.getElementById("tip");
    c.addEventListener("mousemove", (e) => {
      const hit = drag ? null : this.hitAt(e.offsetX, e.offsetY);
      if (!hit) { tip.hidden = true; return; }
      tip.textContent = this.describe(hit);
      tip.hidden = false;
      tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 430) + "px";
      tip.style.top = e.clientY + 14 + "px";
    });
    c.addEventListener("mouseleave", () => { tip.hidden = true; });
    this.draw();
  }

  destroy() {
    if (this.ro) this.ro.disconnect();
    window.removeEventListener("mousemove", this.onMove);
    window.removeEventListener("mouseup", this.onUp);
    document.getElementById("tip").hidden = true;
  }

  describe(hit) {
    switch (hit.type) {
      case "call": { const c = hit.c; return `${c.method} #${c.id}\n${c.outcome} · ${c.endT ? ms(c.endT - c.t) : "open"} · ${c.chunks} chunks, ${c.acks} acks` + (c.cause ? `\n${c.cause}` : "") + (c.reason ? `\n${c.reason}` : ""); }
      case "http": { const x = hit.x; return `${x.method} ${x.url}\n${x.status || "no response"} · ${x.endT ? ms(x.endT - x.t) : "never ended"}` + (x.err ? `\n${x.err}` : ""); }
      case "ws": return `${hit.w.conn} ${hit.w.url}\n${hit.w.messages} messages` + (hit.w.close ? `\n${hit.w.close}` : "");
      case "proc": return `${hit.p.conn} process\n${hit.p.exit || "running at the end"}`;
      case "point": return `${hit.p.kind} @${hit.p.seq} t=${ms(hit.p.t)}\n${hit.p.label}`;
      case "obs": return `observation ${hit.i + 1} @${hit.o.seq} (${hit.o.source})\n${hit.o.changes.join("\n")}`;
    }
    return "";
  }

  // spanRect is where the call with this index is drawn, in client
  // coordinates, or null when it is out of view.
  spanRect(callIndex) {
    const r = this.canvas.getBoundingClientRect();
    const hit = this.hits.find((x) => x.item.type === "call" && x.item.c.index === callIndex);
    return hit ? { x: r.left + (hit.x0 + hit.x1) / 2, y: r.top + (hit.y0 + hit.y1) / 2 } : null;
  }

  plotW() { return Math.max(50, this.canvas.clientWidth - this.labelW - 8); }
  xAt(t) { return this.labelW + (t - this.t0) / (this.t1 - this.t0) * this.plotW(); }
  tAt(x) { return this.t0 + (x - this.labelW) / this.plotW() * (this.t1 - this.t0); }

  setRange(t0, t1) {
    const span = Math.max(t1 - t0, 2000);
    const pad = this.end * 0.05;
    if (t0 < -pad) { t0 = -pad; t1 = t0 + span; }
    if (t1 > this.end + pad + span * 0.5) { t1 = this.end + pad + span * 0.5; t0 = t1 - span; }
    this.t0 = t0; this.t1 = t0 + span;
    this.draw();
  }

  zoom(f, at) {
    const c = at === undefined ? (this.t0 + this.t1) / 2 : at;
    this.setRange(c - (c - this.t0) * f, c + (this.t1 - c) * f);
  }

  fit() { this.t0 = 0; this.t1 = this.end * 1.02; this.draw(); }

  // reveal brings t into view, keeping the zoom.
  reveal(t) {
    if (t >= this.t0 && t <= this.t1) return this.draw();
    const span = this.t1 - this.t0;
    this.setRange(t - span / 2, t + span / 2);
  }

  setHeight(px) { this.height = Math.max(60, Math.min(px, 700)); this.draw(); }
  setCursor(t) { this.cursor = t; this.draw(); }
  setSelected(sel) { this.selected = sel; this.draw(); }

  hitAt(x, y) {
    for (let k = this.hits.length - 1; k >= 0; k--) {
      const r = this.hits[k];
      if (x >= r.x0 - 2 && x <= r.x1 + 2 && y >= r.y0 && y <= r.y1) return r.item;
    }
    return null;
  }

  draw() {
    const c = this.canvas, dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth || this.el.clientWidth || 800, hgt = this.height;
    c.style.height = hgt + "px";
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(hgt * dpr)) { c.width = Math.round(w * dpr); c.height = Math.round(hgt * dpr); }
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, hgt);
    g.font = "11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";
    g.textBaseline = "middle";
    this.hits = [];
    const axisH = 20;
    // time axis
    const span = this.t1 - this.t0;
    const step = niceStep(span / Math.max(2, this.plotW() / 90));
    g.fillStyle = "#f6f8fa"; g.fillRect(0, 0, w, axisH);
    g.strokeStyle = COLORS.grid; g.fillStyle = COLORS.text; g.lineWidth = 1;
    for (let t = Math.ceil(this.t0 / step) * step; t <= this.t1; t += step) {
      const x = Math.round(this.xAt(t)) + 0.5;
      if (x < this.labelW) continue;
      g.beginPath(); g.moveTo(x, axisH - 4); g.lineTo(x, hgt); g.stroke();
      const label = ms(t);
      if (x + 3 + g.measureText(label).width < w) g.fillText(label, x + 3, axisH / 2);
    }
    g.strokeStyle = "#d0d7de"; g.beginPath(); g.moveTo(0, axisH + 0.5); g.lineTo(w, axisH + 0.5); g.stroke();
    let y = axisH + 3;
    const vis = (a, b2) => b2 >= this.t0 && a <= this.t1;
    for (const lane of this.lanes) {
      g.fillStyle = COLORS.text;
      g.fillText(lane.name, 8, y + 7);
      g.strokeStyle = "#f0f2f4"; g.beginPath(); g.moveTo(0, y + lane.h - 1.5); g.lineTo(w, y + lane.h - 1.5); g.stroke();
      g.save();
      g.beginPath(); g.rect(this.labelW, y - 2, w - this.labelW, lane.h + 2); g.clip();
      for (const it of lane.items) {
        const ry = y + it.row * 14, end = it.endT || this.end;
        if (!vis(it.t, it.type === "point" || it.type === "obs" ? it.t : end)) continue;
        const x0 = this.xAt(it.t), x1 = Math.max(this.xAt(end), x0 + 2);
        let hit = { x0, x1, y0: ry, y1: ry + 12, item: it };
        if (it.type === "call") {
          const cc = it.c;
          g.fillStyle = cc.causeInterrupt ? COLORS.cut : COLORS[cc.outcome] || COLORS.unknown;
          g.globalAlpha = cc.outcome === "success" ? 0.75 : 0.9;
          g.fillRect(x0, ry + 2, x1 - x0, 8);
          g.globalAlpha = 1;
          g.fillStyle = "#1f2328";
          for (const t of cc.chunkT || []) { const x = this.xAt(t); g.fillRect(x, ry, 1, 5); }
          g.fillStyle = "#0969da";
          for (const t of cc.ackT || []) { const x = this.xAt(t); g.fillRect(x, ry + 7, 1, 5); }
          if (x1 - x0 > 60) { g.fillStyle = "#fff"; g.fillText(clipText(g, cc.method.replace("orchestration.", ""), x1 - x0 - 6), x0 + 3, ry + 6.5); }
          if (this.selected && this.selected.call === cc.index) { g.strokeStyle = "#1f2328"; g.lineWidth = 1.5; g.strokeRect(x0 - 1, ry + 1, x1 - x0 + 2, 10); g.lineWidth = 1; }
        } else if (it.type === "http") {
          const x = it.x;
          g.fillStyle = x.status >= 400 || x.err ? COLORS.http4 : COLORS.http;
          g.globalAlpha = 0.35; g.fillRect(x0, ry + 3, x1 - x0, 6); g.globalAlpha = 1;
          if (x.respT) { const xr = this.xAt(x.respT); g.fillRect(xr, ry + 3, Math.max(x1 - xr, 1.5), 6); }
          g.fillStyle = "#0a3069";
          for (const t of x.chunks || []) g.fillRect(this.xAt(t), ry + 1, 1, 10);
          if (x1 - x0 > 80) { g.fillStyle = COLORS.text; g.fillText(clipText(g, `${x.method} ${x.url}`, x1 - x0 - 4), x0 + 2, ry - 0.5 + 14); }
        } else if (it.type === "ws") {
          g.fillStyle = COLORS.ws; g.globalAlpha = 0.3; g.fillRect(x0, ry + 3, x1 - x0, 6); g.globalAlpha = 1;
          g.fillRect(x0, ry + 1, 2, 10);
          if (it.endT) g.fillRect(x1 - 2, ry + 1, 2, 10);
        } else if (it.type === "proc") {
          const p = it.p;
          const xr = p.readyT ? this.xAt(p.readyT) : x1;
          g.fillStyle = COLORS.ready; g.globalAlpha = 0.3; g.fillRect(x0, ry + 3, xr - x0, 6); g.globalAlpha = 1;
          g.fillStyle = COLORS.proc; g.fillRect(xr, ry + 3, Math.max(x1 - xr, 1), 6);
          g.fillStyle = COLORS.fail;
          for (const t of p.signals || []) g.fillRect(this.xAt(t) - 1, ry, 2, 12);
        } else if (it.type === "point") {
          const p = it.p;
          g.fillStyle = p.kind === "gate.release" ? "#bc4c00" : p.kind === "gate.request" ? COLORS.gate : p.kind === "mark" ? COLORS.mark : COLORS.text;
          diamond(g, x0, ry + 6, 4.5);
          hit = { x0: x0 - 4, x1: x0 + 4, y0: ry, y1: ry + 12, item: it };
        } else if (it.type === "obs") {
          const changed = it.o.changes.length > 0;
          g.fillStyle = COLORS.obs;
          g.fillRect(x0 - 1, changed ? ry : ry + 4, 2, changed ? 12 : 6);
          hit = { x0: x0 - 3, x1: x0 + 3, y0: ry, y1: ry + 12, item: it };
        }
        if (it.type !== "point" && it.type !== "obs" && this.failSeq !== null && (it.endSeq === this.failSeq)) { /* drawn by the line */ }
        this.hits.push(hit);
      }
      g.restore();
      y += lane.h;
    }
    const line = (t, color, dash) => {
      if (t === null || t < this.t0 || t > this.t1) return;
      const x = Math.round(this.xAt(t)) + 0.5;
      g.strokeStyle = color; g.lineWidth = 1.5; g.setLineDash(dash || []);
      g.beginPath(); g.moveTo(x, axisH); g.lineTo(x, hgt); g.stroke();
      g.setLineDash([]); g.lineWidth = 1;
    };
    line(this.failT, COLORS.fail, [4, 3]);
    if (this.failT !== null && this.failT >= this.t0 && this.failT <= this.t1) {
      const label = "✕ " + (this.b.verdict.failure.check || ""), x = this.xAt(this.failT), tw = g.measureText(label).width + 8;
      const lx = x + tw > w ? x - tw : x;
      g.fillStyle = "#ffebe9"; g.fillRect(lx, 2, tw, axisH - 4);
      g.fillStyle = COLORS.fail; g.fillText(label, lx + 4, axisH / 2);
    }
    line(this.cursor, COLORS.cursor);
    if (this.selected && this.selected.seq !== undefined) line(this.selected.t, "#8c959f", [2, 2]);
    g.fillStyle = "#fff"; g.fillRect(0, axisH + 1, this.labelW - 6, 0);
  }
}

function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
  for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}

function diamond(g, x, y, r) {
  g.beginPath(); g.moveTo(x, y - r); g.lineTo(x + r, y); g.lineTo(x, y + r); g.lineTo(x - r, y); g.closePath(); g.fill();
}

function clipText(g, s, w) {
  if (g.measureText(s).width <= w) return s;
  while (s.length > 1 && g.measureText(s + "…").width > w) s = s.slice(0, -1);
  return s + "…";
}

// ---------- diff page ----------

async function diffPage(a, b) {
  crumbs(h("a", { href: "/", "data-nav": true, text: "corpus" }), h("span", { text: `diff ${a} ↔ ${b}` }));
  const d = await api(`/api/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  const r = d.result;
  const app = document.getElementById("app");
  const link = (id, seq, text) => h("a", { href: `/b/${encodeURIComponent(id)}?seq=${seq}`, "data-nav": true, text: text || `@${seq}` });
  const side = (label, id, s) => h("div", { class: "side", id: "side-" + label.toLowerCase() },
    h("div", null, h("span", { class: "muted", text: label + "  " }), h("a", { class: "name", href: `/b/${encodeURIComponent(id)}`, "data-nav": true, text: id }), "  ", badge(s.verdict.status)),
    s.verdict.failure ? h("div", { class: "mono" }, s.verdict.failure.check, " — ", s.verdict.failure.message, " ", link(id, s.verdict.failure.seq)) : null,
    h("div", { class: "muted", text: `${s.events} events · ${s.story.length} story steps` + (s.truncated ? " · truncated" : "") }));

  const out = h("div", { class: "diffpage", id: "diff" });
  out.append(h("h2", null, "Story of the parent thread", badge(r.same ? "same" : "differ", r.same ? "same story" : "the runs differ")));
  out.append(h("div", { class: "sides" }, side("A", d.a, r.a), side("B", d.b, r.b)));
  if (r.divergence) {
    const dv = r.divergence;
    out.append(h("div", { class: "divergence", id: "divergence" },
      h("div", null, h("b", { text: "Divergence: " }), `A steps ${dv.aIndex}–${dv.aEnd} against B steps ${dv.bIndex}–${dv.bEnd} — they never meet again. `,
        "Look at A ", link(d.a, dv.aSeq), " and B ", link(d.b, dv.bSeq), "."),
      diffPre(dv.diff)));
  }
  out.append(h("div", { class: "legend" }, h("span", null, h("span", { class: "sw" }), "aligned by longest common subsequence, as wireproof diff"),
    h("span", null, h("span", { class: "sw sw-t" }), "timing (met again)"), h("span", null, h("span", { class: "sw sw-d" }), "divergence")));
  const stepCell = (id, s) => s ? [h("td", { class: "ix", text: s.index }), h("td", { class: "st" }, link(id, s.seq), ` ${s.source} ×${s.seen}  `, stateLine(s.state))] : [h("td", { class: "ix" }), h("td", { class: "st muted", text: "—" })];
  out.append(h("table", { class: "story", id: "story" },
    h("colgroup", null, h("col", { class: "c-ix" }), h("col"), h("col", { class: "c-ix" }), h("col")),
    h("tr", null, h("th", { colspan: 2, text: `A  ${d.a}` }), h("th", { colspan: 2, text: `B  ${d.b}` })),
    d.rows.map((row) => h("tr", { class: row.kind }, stepCell(d.a, r.a.story[row.a]), stepCell(d.b, r.b.story[row.b])))));
  if (r.header && r.header.length) {
    out.append(h("div", { class: "section", text: "manifest fields that differ" }),
      h("table", { class: "grid" }, h("thead", null, h("tr", null, h("th", { text: "field" }), h("th", { text: "A" }), h("th", { text: "B" }))),
        h("tbody", null, r.header.map((f) => h("tr", null, h("td", { text: f.field }), h("td", { class: "mono", text: f.a }), h("td", { class: "mono", text: f.b }))))));
  }
  if (r.verdictDiff) out.append(h("details", null, h("summary", { text: "replayed verdicts (-A +B), ids and seqs blanked" }), diffPre(r.verdictDiff)));
  const counts = (title, rows) => h("div", null, h("div", { class: "section", text: title }),
    h("table", { class: "grid" }, h("thead", null, h("tr", null, h("th", { text: "name" }), h("th", { text: "A" }), h("th", { text: "B" }))),
      h("tbody", null, rows.map((c) => h("tr", { class: c.a !== c.b ? "row-failed" : "" }, h("td", { class: "mono", text: c.name }), h("td", { class: "num", text: c.a }), h("td", { class: "num", text: c.b }))))));
  out.append(h("div", { class: "sides" }, counts("events per kind", r.traffic.kinds), counts("RPC requests per method", r.traffic.methods)));
  app.replaceChildren(out);
  out.querySelectorAll(".legend .sw").forEach((s, k) => { s.style.background = ["#d0d7de", "#fff8c5", "#ffebe9"][k]; });
}

function stateLine(st) {
  const runs = st.runs.map((r) => `${r.ordinal}:${r.status}`).join(" ");
  const subs = st.subagents.map((s) => `${s.origin}:${s.status}${s.delivery ? "/" + s.delivery : ""}${s.result !== "none" ? "/" + s.result : ""}`).join(" ");
  return `runs ${runs || "—"} · subagents ${subs || "—"} · items ${st.turnItems.join(",") || "—"} · ${st.messages.length} msg · pending ${st.pendingBackgroundTasks}`;
}

function diffPre(text) {
  return h("pre", { class: "mono" }, text.split("\n").map((l) => h("div", { class: l.startsWith("-") ? "del" : l.startsWith("+") ? "add" : "", text: l })));
}

route();

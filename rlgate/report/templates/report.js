/* rlgate report: per-sample drill-down. Data comes from the JSON block; every piece of it reaches the
   page through textContent, never innerHTML, so model text cannot become markup or script. */
(function () {
  "use strict";
  var PAGE = 25, PREVIEW = 600;
  var holder = document.getElementById("rlgate-data");
  if (!holder) { return; }
  var data = JSON.parse(holder.textContent);
  var CH = data.changes;
  var LABEL = {
    regressed: "regressed", improved: "improved", same: "unchanged", unscored: "unscored",
    only_baseline: "baseline only", only_candidate: "candidate only"
  };
  var FILTERS = [
    ["all", "all documents", null],
    ["changed", "changed pairs (either way)", ["regressed", "improved"]],
    ["regressed", "baseline right → candidate wrong", ["regressed"]],
    ["improved", "baseline wrong → candidate right", ["improved"]],
    ["same", "unchanged", ["same"]],
    ["unpaired", "unpaired", ["only_baseline", "only_candidate"]],
    ["unscored", "unscored", ["unscored"]]
  ];
  // row layout (see rlgate/report/html.py): doc, change, prefix, prompt, promptLen, target,
  // b.response, b.len, b.extracted, b.score, c.response, c.len, c.extracted, c.score
  // invisible or reordering characters (controls, bidi overrides, zero-width, separators) shown as \uXXXX
  var INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
  function vis(text) {
    return String(text).replace(/\r\n/g, "\n").replace(/\r/g, "\\r").replace(INVISIBLE, function (c) {
      return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = vis(text); }
    return e;
  }
  function fmtScore(s) {
    if (s === null || s === undefined) { return "–"; }
    if (s === 1) { return "✓ 1"; }
    if (s === 0) { return "✗ 0"; }
    return String(Math.round(s * 1000) / 1000);
  }
  function longText(text, total, keepEnd, preview) {
    var limit = preview || PREVIEW;
    var box = el("div");
    if (text === null || text === undefined) {
      box.appendChild(el("p", "muted", total > 0
        ? "(" + total.toLocaleString() + " characters, left out to keep this file small; the run's sample file has them)"
        : "(none)"));
      return box;
    }
    var pre = el("pre", "txt");
    box.appendChild(pre);
    var cut = total - text.length;
    var note = cut > 0 ? (keepEnd ? "[" + cut.toLocaleString() + " earlier characters not embedded]\n"
                                  : "\n[" + cut.toLocaleString() + " more characters not embedded]") : "";
    if (text.length <= limit) {
      pre.textContent = vis(keepEnd ? note + text : text + note);
      return box;
    }
    var short = keepEnd ? "…" + text.slice(text.length - limit) : text.slice(0, limit) + "…";
    pre.textContent = vis(short);
    var btn = el("button", "link", "show all (" + text.length.toLocaleString() + " characters)");
    btn.type = "button";
    var open = false;
    btn.addEventListener("click", function () {
      open = !open;
      pre.textContent = vis(open ? (keepEnd ? note + text : text + note) : short);
      btn.textContent = open ? "show less" : "show all (" + text.length.toLocaleString() + " characters)";
    });
    box.appendChild(btn);
    return box;
  }
  function side(label, row, at) {
    var col = el("div");
    col.appendChild(el("div", "label", label + " — extracted: " + (row[at + 2] === null ? "–" : row[at + 2]) +
                       " · score " + fmtScore(row[at + 3])));
    if (row[at + 1] === -1) { col.appendChild(el("p", "muted", "(no answer for this document in this run)")); }
    else { col.appendChild(longText(row[at], row[at + 1], false)); }
    return col;
  }
  function sampleCard(task, row) {
    var change = CH[row[1]];
    var d = el("details", "sample");
    var s = el("summary");
    s.appendChild(el("span", "mono", "#" + row[0]));
    s.appendChild(el("span", "chg c-" + change, LABEL[change] || change));
    s.appendChild(el("span", null, "target: " + (row[5] === null ? "–" : row[5])));
    s.appendChild(el("span", null, "baseline: " + (row[8] === null ? "–" : row[8]) + " (" + fmtScore(row[9]) + ")"));
    s.appendChild(el("span", null, "candidate: " + (row[12] === null ? "–" : row[12]) + " (" + fmtScore(row[13]) + ")"));
    d.appendChild(s);
    var built = false;
    d.addEventListener("toggle", function () {
      if (!d.open || built) { return; }
      built = true;
      var body = el("div", "sample-body");
      body.appendChild(el("div", "label", "prompt"));
      if (row[2] >= 0) {
        var ctx = task.prefixes[row[2]];
        var btn = el("button", "link", "show shared context (" + ctx.length.toLocaleString() + " characters)");
        btn.type = "button";
        var pre = el("pre", "txt");
        pre.hidden = true;
        pre.textContent = vis(ctx);
        btn.addEventListener("click", function () { pre.hidden = !pre.hidden; });
        body.appendChild(btn);
        body.appendChild(pre);
      }
      var prefixLen = row[2] >= 0 ? task.prefixes[row[2]].length : 0;
      body.appendChild(longText(row[3], row[4] - prefixLen, true, 1500));
      var sides = el("div", "sides");
      sides.appendChild(side("baseline", row, 6));
      sides.appendChild(side("candidate", row, 10));
      body.appendChild(sides);
      d.appendChild(body);
    });
    return d;
  }
  function browser(task, host) {
    var counts = {};
    CH.forEach(function (c) { counts[c] = 0; });
    task.rows.forEach(function (r) { counts[CH[r[1]]] += 1; });
    host.textContent = "";
    var controls = el("div", "controls");
    var select = el("select");
    select.setAttribute("aria-label", "filter documents");
    FILTERS.forEach(function (f) {
      var n = f[2] === null ? task.rows.length : f[2].reduce(function (a, c) { return a + (counts[c] || 0); }, 0);
      var o = el("option", null, f[1] + " (" + n.toLocaleString() + ")");
      o.value = f[0];
      select.appendChild(o);
    });
    var search = el("input");
    search.type = "search";
    search.placeholder = "doc id or text";
    search.setAttribute("aria-label", "search documents");
    var prev = el("button", null, "‹ prev"), next = el("button", null, "next ›");
    prev.type = next.type = "button";
    var info = el("span", "pageinfo");
    [select, search, prev, next, info].forEach(function (x) { controls.appendChild(x); });
    host.appendChild(controls);
    host.appendChild(el("div", "sample-head", "document · change · target · baseline answer (score) · candidate answer (score)"));
    var list = el("div");
    host.appendChild(list);
    var page = 0, shown = task.rows;
    function apply() {
      var f = FILTERS.filter(function (x) { return x[0] === select.value; })[0];
      var q = search.value.trim().toLowerCase();
      shown = task.rows.filter(function (r) {
        if (f[2] !== null && f[2].indexOf(CH[r[1]]) < 0) { return false; }
        if (!q) { return true; }
        if (String(r[0]) === q) { return true; }
        return [r[3], r[5], r[6], r[8], r[10], r[12]].some(function (t) {
          return typeof t === "string" && t.toLowerCase().indexOf(q) >= 0;
        });
      });
      page = 0;
      draw();
    }
    function draw() {
      var pages = Math.max(1, Math.ceil(shown.length / PAGE));
      page = Math.min(page, pages - 1);
      list.textContent = "";
      shown.slice(page * PAGE, page * PAGE + PAGE).forEach(function (r) { list.appendChild(sampleCard(task, r)); });
      if (!shown.length) { list.appendChild(el("p", "muted", "No documents match.")); }
      var from = shown.length ? page * PAGE + 1 : 0, to = Math.min(shown.length, page * PAGE + PAGE);
      info.textContent = from + "–" + to + " of " + shown.length.toLocaleString() + " · page " + (page + 1) + " / " + pages;
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }
    select.addEventListener("change", apply);
    search.addEventListener("input", apply);
    prev.addEventListener("click", function () { page -= 1; draw(); });
    next.addEventListener("click", function () { page += 1; draw(); });
    if (counts.regressed > 0) { select.value = "regressed"; }
    apply();
  }
  data.tasks.forEach(function (task) {
    var host = document.getElementById("drill-" + task.section);
    if (host) { browser(task, host); }
  });
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.task").forEach(function (d) { d.open = true; });
  });
}());

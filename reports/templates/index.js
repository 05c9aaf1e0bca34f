// Sort and filter the index of runs, in place. No dependencies; works offline.
(function () {
  "use strict";
  var table = document.getElementById("runs");
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var text = document.getElementById("filter-text");
  var verdict = document.getElementById("filter-verdict");
  var shown = document.getElementById("shown");
  var sortKey = null, sortDir = 1;

  function cell(row, key) { return row.querySelector('[data-key="' + key + '"]'); }
  function value(row, key) {
    var c = cell(row, key);
    var v = c ? (c.getAttribute("data-value") || c.textContent.trim()) : "";
    var n = Number(v);
    return v !== "" && !isNaN(n) ? n : v.toLowerCase();
  }
  function apply() {
    var q = text.value.trim().toLowerCase();
    var want = verdict.value;
    var visible = 0;
    rows.forEach(function (row) {
      var ok = (!want || row.getAttribute("data-verdict") === want) &&
               (!q || row.textContent.toLowerCase().indexOf(q) !== -1);
      row.hidden = !ok;
      if (ok) { visible += 1; }
    });
    shown.textContent = visible + " of " + rows.length + " runs shown";
  }
  function sortBy(key) {
    sortDir = sortKey === key ? -sortDir : 1;
    sortKey = key;
    rows.sort(function (a, b) {
      var x = value(a, key), y = value(b, key);
      if (typeof x !== typeof y) { x = String(x); y = String(y); }
      return x < y ? -sortDir : x > y ? sortDir : 0;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.setAttribute("aria-sort", th.getAttribute("data-sort") === key ? (sortDir > 0 ? "ascending" : "descending") : "none");
    });
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    th.addEventListener("click", function () { sortBy(th.getAttribute("data-sort")); });
  });
  text.addEventListener("input", apply);
  verdict.addEventListener("change", apply);
  var params = new URLSearchParams(window.location.search);
  if (params.get("q")) { text.value = params.get("q"); }
  if (params.get("verdict")) { verdict.value = params.get("verdict"); }
  apply();
  document.body.setAttribute("data-ready", "1");
})();

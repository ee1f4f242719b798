/* The site's few lines of script: a word-level diff between any two versions of a rule,
   and the search over rule texts. Texts are inserted with textContent, never as HTML. */
(function () {
  "use strict";
  function words(text) { return text.match(/\s+|[^\s]+/g) || []; }
  function diff(a, b) {
    var n = a.length, m = b.length, i, j, table = [];
    for (i = 0; i <= n; i++) { table.push(new Int32Array(m + 1)); }
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1
          : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    var out = [];
    i = 0; j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) { out.push(["", a[i]]); i++; j++; }
      else if (j < m && (i === n || table[i][j + 1] >= table[i + 1][j])) { out.push(["ins", b[j]]); j++; }
      else { out.push(["del", a[i]]); i++; }
    }
    return out;
  }
  function show(target, parts) {
    target.textContent = "";
    parts.forEach(function (part) {
      var node = part[0] ? document.createElement(part[0]) : document.createTextNode(part[1]);
      if (part[0]) { node.textContent = part[1]; }
      target.appendChild(node);
    });
  }
  var data = document.getElementById("versions");
  if (data) {
    var versions = JSON.parse(data.textContent);
    var from = document.getElementById("diff-from"), to = document.getElementById("diff-to");
    var out = document.getElementById("diff-out");
    versions.forEach(function (v, k) {
      from.add(new Option(v.label, String(k)));
      to.add(new Option(v.label, String(k)));
    });
    from.value = String(Math.max(0, versions.length - 2));
    to.value = String(versions.length - 1);
    var update = function () {
      show(out, diff(words(versions[+from.value].text), words(versions[+to.value].text)));
    };
    from.addEventListener("change", update);
    to.addEventListener("change", update);
    update();
  }
  // About 60 characters before the match and 140 after, widened to whole words: a snippet
  // never starts or ends inside a word, and says with "…" only where text was left out.
  function snippet(text, at) {
    var start = Math.max(0, at - 60), end = Math.min(text.length, at + 140);
    if (start > 0) { start = text.lastIndexOf(" ", start) + 1; }
    if (end < text.length) {
      var space = text.indexOf(" ", end);
      end = space < 0 ? text.length : space;
    }
    return (start > 0 ? "…" : "") + text.slice(start, end) + (end < text.length ? "…" : "");
  }
  window.nomicSearch = function (ruleWord) {
    var index = window.NOMIC_INDEX || [];
    var input = document.getElementById("q"), list = document.getElementById("results");
    var none = document.getElementById("no-results");
    var query = new URLSearchParams(window.location.search).get("q") || "";
    input.value = query;
    function run() {
      var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      list.textContent = "";
      if (!terms.length) { none.hidden = true; return; }
      var found = index.filter(function (r) {
        var hay = (r.n + " " + r.t + " " + r.x).toLowerCase();
        return terms.every(function (t) { return hay.indexOf(t) >= 0; });
      });
      none.hidden = found.length > 0;
      found.slice(0, 100).forEach(function (r) {
        var item = document.createElement("li"), link = document.createElement("a");
        link.href = "rules/" + r.i + ".html";
        link.textContent = ruleWord + " " + r.n + (r.t ? " — " + r.t : "");
        if (!r.f) { link.className = "gone"; }
        var excerpt = document.createElement("p");
        excerpt.textContent = snippet(r.x, Math.max(0, r.x.toLowerCase().indexOf(terms[0])));
        item.appendChild(link);
        item.appendChild(excerpt);
        list.appendChild(item);
      });
    }
    input.addEventListener("input", run);
    document.getElementById("search-form").addEventListener("submit", function (e) {
      e.preventDefault(); run();
    });
    run();
  };
}());

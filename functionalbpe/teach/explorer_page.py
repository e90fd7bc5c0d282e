"""The explorer page: one HTML file with its script and style inline (no network, no
external scripts or fonts). :mod:`functionalbpe.teach.explorer` fills in ``/*DATA*/``.

The script's encoder is the lesson's (:func:`functionalbpe.core.reference.encode_piece`):
cut the text at special tokens, cut each part with the pattern (:mod:`js_patterns`), start
each piece from its UTF-8 bytes, and merge the adjacent pair of lowest rank, every
occurrence left to right, until no pair of the piece was ever merged.
"""

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>/*TITLE*/</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 70em; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
textarea { width: 100%; height: 7em; font: 1em ui-monospace, monospace; box-sizing: border-box; }
.note { background: #fff6d5; border: 1px solid #e6d38a; padding: .5em .8em; }
.stats { margin: .5em 0; color: #555; }
.tokens { font: 1em/1.9 ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
.tok { border-radius: 3px; padding: 1px 0; cursor: pointer; }
.tok:hover, .tok.picked { outline: 2px solid #333; }
.c0 { background: #cfe3ff; } .c1 { background: #ffe2b3; } .c2 { background: #c9f2d4; }
.c3 { background: #ffd0d6; } .c4 { background: #e4d7ff; }
.ids { font: .85em ui-monospace, monospace; color: #555; word-break: break-all; }
.tree ul { list-style: none; padding-left: 1.4em; margin: 0; border-left: 1px dotted #aaa; }
.tree li { font: .95em/1.8 ui-monospace, monospace; }
button.example { margin: .2em; }
table.pairs { border-collapse: collapse; font: .9em ui-monospace, monospace; }
table.pairs td, table.pairs th { border: 1px solid #ddd; padding: .15em .6em; }
tr.winner { background: #c9f2d4; font-weight: bold; }
.piece { display: inline-block; margin: .15em .6em .15em 0; font: .95em ui-monospace, monospace; }
.piece .count { color: #777; font-size: .8em; margin-left: .2em; }
</style>
</head>
<body>
<h1>/*TITLE*/</h1>
<p id="about"></p>
<div id="live">
<textarea id="text" spellcheck="false" aria-label="text to tokenize"></textarea>
<div id="presets"></div>
<div class="stats" id="stats"></div>
<div class="tokens" id="tokens"></div>
<div class="ids" id="ids"></div>
</div>
<div id="examples" hidden></div>
<h2 id="tree-title" hidden>How the token was built</h2>
<div class="tree" id="tree"></div>
<div id="replay" hidden>
<h2>Training, merge by merge</h2>
<p id="replay-about"></p>
<input type="range" id="step" min="0" value="0" style="width: 100%" aria-label="merge step">
<p id="step-title"></p>
<table class="pairs" id="pairs"></table>
<h3>Pieces</h3>
<div id="pieces"></div>
</div>
<script type="application/json" id="fbpe-data">/*DATA*/</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("fbpe-data").textContent);
const $ = (id) => document.getElementById(id);
const NUM_BYTES = 256;

// The merge table: rank of a pair (as the id it makes), and the pair of each made id.
const ranks = new Map();
D.merges.forEach(([a, b], k) => ranks.set(a + "," + b, D.firstMerge + k));
const externalOfByte = D.byteIds || null;
const internalOfByte = new Map();
if (externalOfByte) externalOfByte.forEach((e, b) => internalOfByte.set(e, b));
const external = (i) => (i < NUM_BYTES && externalOfByte ? externalOfByte[i] : i);
const specialOfInternal = new Map();
for (const [s, e] of Object.entries(D.specials)) specialOfInternal.set(e, s);

// Lone surrogates are read as U+FFFD, as the library (and tiktoken) read them.
function wellFormed(text) {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

const utf8 = new TextEncoder();
const pieceCache = new Map();
// One piece to internal ids: reference.encode_piece.
function encodePiece(piece) {
  let ids = pieceCache.get(piece);
  if (ids) return ids;
  ids = Array.from(utf8.encode(piece));
  while (ids.length >= 2) {
    let best = Infinity;
    for (let i = 0; i + 1 < ids.length; i++) {
      const r = ranks.get(ids[i] + "," + ids[i + 1]);
      if (r !== undefined && r < best) best = r;
    }
    if (best === Infinity) break;
    const [a, b] = D.merges[best - D.firstMerge];
    const out = [];
    for (let i = 0; i < ids.length; ) {
      if (i + 1 < ids.length && ids[i] === a && ids[i + 1] === b) { out.push(best); i += 2; }
      else { out.push(ids[i]); i += 1; }
    }
    ids = out;
  }
  pieceCache.set(piece, ids);
  return ids;
}

// (In a "u" RegExp only syntax characters and "/" may be escaped.)
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&");
const specialNames = Object.keys(D.specials).sort((x, y) => y.length - x.length);
const specialRe = specialNames.length ? new RegExp(specialNames.map(escapeRe).join("|"), "gu") : null;
const patternRe = D.regex ? new RegExp(D.regex, "gu") : null;

// The whole text to [{id (the tokenizer's), internal, special}], special tokens allowed.
function encode(text) {
  text = wellFormed(text);
  const out = [];
  const ordinary = (part) => {
    for (const m of part.matchAll(patternRe)) {
      for (const i of encodePiece(m[0])) out.push({ id: external(i), internal: i });
    }
  };
  let last = 0;
  if (specialRe) {
    for (const m of text.matchAll(specialRe)) {
      ordinary(text.slice(last, m.index));
      out.push({ id: D.specials[m[0]], internal: -1, special: m[0] });
      last = m.index + m[0].length;
    }
  }
  ordinary(text.slice(last));
  return out;
}

function shown(token) {
  if (token.special !== undefined) return token.special;
  return D.shown[token.internal];
}

// Each token as an element carrying data-token-id, on alternating colours.
function renderTokens(box, tokens) {
  box.textContent = "";
  tokens.forEach((t, k) => {
    const span = document.createElement("span");
    span.className = "tok c" + (k % 5);
    span.dataset.tokenId = String(t.id);
    span.dataset.internal = String(t.internal);
    span.title = "id " + t.id;
    span.textContent = shown(t);
    span.addEventListener("click", () => showTree(t, span));
    box.appendChild(span);
    if (shown(t).includes("\u21b5")) box.appendChild(document.createElement("br"));
  });
}

// How a token was built from bytes: its two parts, recursively.
function treeOf(internal) {
  const li = document.createElement("li");
  const ext = internal < 0 ? "" : external(internal);
  li.textContent = "[" + D.shown[internal] + "] " + ext;
  if (internal >= D.firstMerge) {
    const ul = document.createElement("ul");
    for (const part of D.merges[internal - D.firstMerge]) ul.appendChild(treeOf(part));
    li.appendChild(ul);
  }
  return li;
}

function showTree(token, span) {
  document.querySelectorAll(".tok.picked").forEach((e) => e.classList.remove("picked"));
  if (span) span.classList.add("picked");
  const box = $("tree");
  box.textContent = "";
  $("tree-title").hidden = false;
  const ul = document.createElement("ul");
  if (token.internal < 0) {
    const li = document.createElement("li");
    li.textContent = "[" + token.special + "] " + token.id + "  (a special token: never merged)";
    ul.appendChild(li);
  } else {
    ul.appendChild(treeOf(token.internal));
  }
  box.appendChild(ul);
}

function render(text) {
  const tokens = encode(text);
  renderTokens($("tokens"), tokens);
  const chars = Array.from(wellFormed(text)).length;
  $("stats").textContent = tokens.length + " tokens, " + chars + " characters, " +
    (tokens.length ? (chars / tokens.length).toFixed(2) : "0") + " characters per token";
  $("ids").textContent = tokens.map((t) => t.id).join(" ");
  window.fbpeRendered = text;  // for tests: what the page shows now
}

function fromFragment() {
  const hash = location.hash;
  if (!hash.startsWith("#text=")) return null;
  try { return decodeURIComponent(hash.slice(6)); } catch (e) { return null; }
}

function setupLive() {
  const box = $("text");
  box.addEventListener("input", () => render(box.value));
  const load = () => {
    const t = fromFragment();
    if (t !== null) box.value = t;
    render(t !== null ? t : box.value);  // (a text box turns "\r\n" into "\n": not the fragment)
  };
  window.addEventListener("hashchange", load);
  D.examples.forEach((ex) => {
    const b = document.createElement("button");
    b.className = "example";
    b.textContent = ex.text.length > 24 ? ex.text.slice(0, 24) + "\u2026" : ex.text;
    b.addEventListener("click", () => { box.value = ex.text; render(ex.text); });
    $("presets").appendChild(b);
  });
  if (fromFragment() === null && D.examples.length) box.value = D.examples[0].text;
  load();
}

function setupExamples() {
  $("live").hidden = true;
  const div = $("examples");
  div.hidden = false;
  const note = document.createElement("p");
  note.className = "note";
  note.textContent = "This tokenizer uses the " + D.scheme + " scheme, whose text form (instructions, " +
    "markers) is written by the library, not by this page: these examples were encoded by the " +
    "library when the page was made, and the page does not tokenize as you type.";
  div.appendChild(note);
  D.examples.forEach((ex) => {
    const h = document.createElement("h3");
    h.textContent = ex.text;
    const box = document.createElement("div");
    box.className = "tokens";
    renderTokens(box, ex.tokens.map(([id, internal, special]) =>
      special === null ? { id, internal } : { id, internal: -1, special }));
    div.appendChild(h);
    div.appendChild(box);
  });
}

function setupReplay() {
  const R = D.replay;
  $("replay").hidden = false;
  $("replay-about").textContent = "Training on " + R.chars + " characters of your text (" +
    R.pieces + " distinct pieces): at each step every adjacent pair is counted, weighted by how " +
    "often its piece occurs, and the pair with the highest count is merged (on a tie, the " +
    "smallest pair of ids). Move the slider.";
  const slider = $("step");
  slider.max = String(R.steps.length - 1);
  const cell = (row, text, tag) => { const c = document.createElement(tag || "td"); c.textContent = text; row.appendChild(c); };
  const show = (k) => {
    const s = R.steps[k];
    $("step-title").textContent = s.merge
      ? "Step " + (k + 1) + " of " + (R.steps.length - 1) + ": merge " + s.merge + " (count " + s.count + ")" +
        (s.runnerUp ? "; runner-up " + s.runnerUp : "")
      : "After " + (R.steps.length - 1) + " merges: no more merges in the replay.";
    const table = $("pairs");
    table.textContent = "";
    const head = document.createElement("tr");
    cell(head, "pair", "th"); cell(head, "count", "th");
    table.appendChild(head);
    s.pairs.forEach(([pair, count, win]) => {
      const tr = document.createElement("tr");
      if (win) tr.className = "winner";
      cell(tr, pair); cell(tr, String(count));
      table.appendChild(tr);
    });
    const pieces = $("pieces");
    pieces.textContent = "";
    s.words.forEach(([symbols, count]) => {
      const span = document.createElement("span");
      span.className = "piece";
      symbols.forEach((sym, j) => {
        const t = document.createElement("span");
        t.className = "tok c" + (j % 5);
        t.textContent = sym;
        span.appendChild(t);
      });
      const c = document.createElement("span");
      c.className = "count";
      c.textContent = "\u00d7" + count;
      span.appendChild(c);
      pieces.appendChild(span);
    });
  };
  slider.addEventListener("input", () => show(+slider.value));
  show(0);
}

$("about").textContent = D.about;
if (D.regex) setupLive(); else setupExamples();
if (D.replay) setupReplay();
</script>
</body>
</html>
"""

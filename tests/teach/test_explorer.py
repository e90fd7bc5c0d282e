"""The explorer page encodes exactly like the library.

Without a browser: every built-in pattern, rewritten for JavaScript (possessive quantifiers
dropped, (?i) spelt out, classes as explicit ranges), cuts hypothesis text exactly as the
original does (checked through the same rewrite with Python escapes); the page is one file
with nothing to fetch; the training replay follows the trainer's merges.

With a browser (Playwright driving the system Chromium; skipped when either is missing): the
page shows, for texts given in the URL fragment and typed into the box, the ids of
``tok.encode``.
"""
from __future__ import annotations

import os
import random
import re
import shutil
import urllib.parse

import pytest

import functionalbpe as fb
from functionalbpe.cli import main
from functionalbpe.teach.explorer import explorer_html, replay
from functionalbpe.teach.js_patterns import TEMPLATES, python_regex
from functionalbpe.text.patterns import pretokenize

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Characters where the patterns' corners are: contractions in any case (and the long s that
# (?i) folds onto s), digits, every kind of space and line end, marks, letters of every case.
TRICKY = "'sStTlLdDvVeErRmMſ1234567890 \t\n\r\x0b\x0c\x85\xa0\u2028\u2029\u3000\ufeff\u2581_/!?.,-\u0301ǅÀßaZ東😀٣"
TEXTS = st.text(alphabet=st.sampled_from(TRICKY), max_size=40) | st.text(max_size=40)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@given(text=TEXTS)
def test_rewritten_patterns_cut_as_the_originals(name, text):
    text = text.encode("utf-8", "replace").decode("utf-8")  # the page reads lone surrogates as U+FFFD
    assert re.findall(python_regex(name), text) == pretokenize(text, name)


VARIED = [
    "Hello world!! 123456",
    "I'LL say it's 'S and 'd 'Ve don'ſ",
    "  leading and trailing spaces   ",
    "tabs\tand\nnewlines\r\nand\n\n\nblank lines\n",
    "numbers 3.14159, 1,000,000 and 0x1F",
    "naïve café Ünïcödé Größe",
    "東京都の天気は晴れです",
    "नमस्ते दुनिया",
    "مرحبا بالعالم",
    "Привет, мир!",
    "emoji 😀👍🏽 👨‍👩‍👧 flags 🇫🇷",
    "code: def f(x):\n    return x ** 2  # square",
    "<|endoftext|>special<|endoftext|> tokens",
    "x\u00a0y\u2028z\ufeffw\u3000v",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "!!!???...,,,;;;",
    "CamelCaseWordsAndALLCAPS",
    "e\u0301 combining marks a\u0300\u0301",
    "ǅemal ǈ titlecase",
    "",
    " ",
    "\n",
    "https://example.com/path?q=1&r=2",
    "The quick brown fox jumps over the lazy dog.",
]


def random_texts(n, seed=19):
    rng = random.Random(seed)
    return ["".join(rng.choice(TRICKY + "abcxyz ") for _ in range(rng.randint(1, 30))) for _ in range(n)]


@pytest.fixture(scope="module")
def tok():
    corpus = " ".join(VARIED[:-1]) * 3 + " ".join(random_texts(30, seed=1))
    return fb.train(corpus, vocab_size=500, special_tokens=["<|endoftext|>"], progress=False)


def test_page_is_self_contained(tok):
    page = explorer_html(tok, train_on="hug pug hugs " * 5)
    assert not re.search(r"(src|href)\s*=|https?:|@import|url\(", page, re.I)
    assert page.count("<script") == 2  # the data, and the script: nothing fetched


def test_scheme_page_shows_library_examples():
    tok = fb.train(VARIED, vocab_size=None, scheme="markers", case=True, progress=False)
    page = explorer_html(tok, examples=["Hello World"])
    ids = tok.encode("Hello World")
    assert '"regex":null' in page and f'"text":"Hello World","tokens":[' in page
    assert page.split('"text":"Hello World","tokens":')[1].startswith(str([[i, i, None] for i in ids]).replace(" ", "").replace("None", "null"))


def test_replay_follows_the_trainer(tok):
    text = "low lower lowest newer newest wider widest " * 3
    records = []
    small = fb.train(text, vocab_size=256 + 20, progress=False, trace=records.append)
    r = replay(tok, text, 20)
    assert len(r["steps"]) == len(small.merges) + 1
    for step, rec in zip(r["steps"], records):
        winners = [p for p in step["pairs"] if p[2]]
        assert step["pairs"][0] == winners[0] and step["pairs"][0][1] == rec.count
        assert step["merge"] == f"[{rec.left_token}][{rec.right_token}] -> [{rec.token}]"
    with pytest.raises(fb.FunctionalBPEError, match="small texts"):
        replay(tok, "x" * 20_001)


def test_cli_writes_the_page(tok, tmp_path, capsys):
    path = tmp_path / "tok.json"
    tok.save(path)
    (tmp_path / "small.txt").write_text("hug pug hugs " * 4, encoding="utf-8")
    out = tmp_path / "e.html"
    assert main(["explore", "-t", str(path), "-o", str(out), "--train-on", str(tmp_path / "small.txt"), "-q"]) == 0
    assert out.read_text(encoding="utf-8") == explorer_html(tok, train_on="hug pug hugs " * 4)
    assert main(["explore", "-t", str(path), "-o", str(tmp_path / "no" / "e.html")]) == 2


def chromium_path():
    for candidate in (os.environ.get("FUNCTIONALBPE_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


@pytest.fixture(scope="module")
def browser():
    # CI sets FUNCTIONALBPE_REQUIRE_BROWSER=1: there a missing browser fails, not skips.
    required = os.environ.get("FUNCTIONALBPE_REQUIRE_BROWSER") == "1"
    try:
        from playwright import sync_api
    except ImportError:
        if required:
            raise
        pytest.skip("playwright is not installed (pip install -e '.[browser]')")
    executable = chromium_path()
    if executable is None:
        assert not required, "FUNCTIONALBPE_REQUIRE_BROWSER=1 but no Chromium found"
        pytest.skip("no Chromium found (apt-get install chromium, or set FUNCTIONALBPE_CHROMIUM)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield b
        b.close()


def page_ids(page):
    return page.eval_on_selector_all("#tokens [data-token-id]", "els => els.map(e => Number(e.dataset.tokenId))")


def test_browser_page_encodes_like_the_library(browser, tok, tmp_path):
    path = tmp_path / "explorer.html"
    path.write_text(explorer_html(tok, train_on=" ".join(VARIED)), encoding="utf-8")
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    url = path.as_uri()
    texts = VARIED + random_texts(16)
    for text in texts:  # given in the URL fragment
        page.goto(url + "#text=" + urllib.parse.quote(text, safe=""))
        page.wait_for_function("t => window.fbpeRendered === t", arg=text)
        assert page_ids(page) == tok.encode(text, allowed_special="all"), text
    for text in ["Hello wörld 123", VARIED[1], VARIED[10]]:  # typed into the box
        page.fill("#text", "")
        page.locator("#text").press_sequentially(text)
        page.wait_for_function("t => window.fbpeRendered === t", arg=text)
        assert page_ids(page) == tok.encode(text, allowed_special="all"), text
    page.fill("#text", VARIED[5])
    page.wait_for_function("t => window.fbpeRendered === t", arg=VARIED[5])
    assert page_ids(page) == tok.encode(VARIED[5])
    page.click("#tokens .tok >> nth=0")  # the merge tree spells the token
    leaves = page.eval_on_selector_all("#tree li:not(:has(ul))", "els => els.map(e => e.textContent)")
    assert leaves and all(re.fullmatch(r"\[.*\] \d+", leaf) for leaf in leaves)
    page.fill("#step", "3")
    page.dispatch_event("#step", "input")
    assert page.text_content("#step-title").startswith("Step 4 of ")
    assert errors == []


def test_browser_page_keeps_an_imported_vocabulary_ids(browser, tok, tmp_path):
    from functionalbpe.schemes.plain import PlainScheme

    imported = fb.Tokenizer(PlainScheme("gpt4"), tok.merges, ["<|endoftext|>"], byte_ids=[255 - b for b in range(256)],
                            special_ids=[1000])
    path = tmp_path / "imported.html"
    path.write_text(explorer_html(imported), encoding="utf-8")
    page = browser.new_page()
    for text in VARIED[:6] + [VARIED[12]]:
        page.goto(path.as_uri() + "#text=" + urllib.parse.quote(text, safe=""))
        page.wait_for_function("t => window.fbpeRendered === t", arg=text)
        assert page_ids(page) == imported.encode(text, allowed_special="all"), text


@pytest.mark.parametrize("pattern", ["gpt2", "o200k", "llama3", "functionalizer"])
def test_browser_page_cuts_with_every_builtin_pattern(browser, pattern, tmp_path):
    tok = fb.train(VARIED, vocab_size=320, pattern=pattern, progress=False)
    path = tmp_path / f"{pattern}.html"
    path.write_text(explorer_html(tok, examples=[]), encoding="utf-8")
    page = browser.new_page()
    for text in VARIED[:10] + random_texts(3, seed=len(pattern)):
        page.goto(path.as_uri() + "#text=" + urllib.parse.quote(text, safe=""))
        page.wait_for_function("t => window.fbpeRendered === t", arg=text)
        assert page_ids(page) == tok.encode(text), text

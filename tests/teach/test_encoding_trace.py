"""The encoding trace ends in exactly what encode gives, for every scheme; the vocabulary
dump lists every token once; the commands that print them."""
from __future__ import annotations

import re

import pytest

import functionalbpe as fb
from functionalbpe.cli import main
from functionalbpe.core.reference import merge
from functionalbpe.util.display import visible
from functionalbpe.teach.encode_trace import merge_tree

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

CORPUS = ("The cat sat on the mat. THE CAT!!! Héllo, héllo — naïve café 12345 \t\n"
          "def f(x):\n    return x ** 2  # 😀 ça va?\n") * 4
SPECIAL = "<|endoftext|>"
SCHEMES = {
    "plain": {},
    "functional": {},
    "markers": {"punct": True, "digits": True, "case": True},
}


@pytest.fixture(scope="module", params=sorted(SCHEMES))
def tok(request):
    return fb.train(CORPUS, vocab_size=None, scheme=request.param, special_tokens=[SPECIAL],
                    progress=False, **SCHEMES[request.param])


def check_trace(tok, text):
    t = tok.trace(text)
    assert t.ids == tok.encode(text, allowed_special="all")
    assert len(t.steps) == len(t.pieces)
    for piece in t.pieces:
        symbols = piece.start
        last_rank = -1
        for step in piece.steps:
            assert step.before == symbols
            assert step.after == tuple(merge(list(step.before), step.pair, step.token))
            assert tok.merges[step.rank] == step.pair
            assert step.rank > last_rank  # merges are replayed in training order
            last_rank = step.rank
            symbols = step.after
        if not piece.special:
            assert symbols == piece.ids
            assert b"".join(tok.token_bytes(i) for i in piece.start) == piece.form.encode("utf-8")
    return t


TEXTS = st.text(alphabet=st.sampled_from("ab Hé\n!1😀\ue000" + "The cat".upper()), max_size=40) | st.text(max_size=30)


@given(text=TEXTS, special=st.booleans())
def test_trace_ends_in_encode(tok, text, special):
    check_trace(tok, text + (SPECIAL + text if special else ""))


def test_trace_of_known_text(tok):
    t = check_trace(tok, "The cat sat." + SPECIAL)
    assert t.pieces[-1].special and t.pieces[-1].ids == (tok.special_tokens[SPECIAL],)
    assert any(p.steps for p in t.pieces)


def test_vocab_lines_list_every_token_once(tok):
    lines = tok.vocab_lines()
    ids = [int(line.split()[0]) for line in lines]
    assert sorted(ids) == list(range(tok.vocab_size))
    merges = [line for line in lines if " -> " in line]
    assert len(merges) == len(tok.merges)
    first = tok.alphabet.first_merge
    for k, line in enumerate(merges):
        m = re.fullmatch(r"\s*(\d+)  \[(.*)\]\[(.*)\] -> \[(.*)\]  (\d+)", line)
        assert m is not None, line
        assert int(m.group(1)) == first + k and int(m.group(5)) == tok.merge_counts[k]
    assert f"[{SPECIAL}]  special" in lines[0]
    atoms = [line for line in lines if "  atom " in line]
    assert len(atoms) == len(tok.scheme.atoms)


def test_merge_tree_spells_the_token(tok):
    token = tok.alphabet.first_merge + len(tok.merges) - 1
    lines = merge_tree(tok, token)
    leaves = [int(line.split()[-1]) for line in lines[1:] if int(line.split()[-1]) < tok.alphabet.first_merge]
    assert b"".join(tok.token_bytes(i) for i in leaves) == tok.token_bytes(token)
    assert len(lines) == 1 + 2 * (len(leaves) - 1)  # a binary tree: n leaves, n - 1 merges


def test_vocab_dump_of_plain_bytes_is_visible():
    tok = fb.train(["a b\n\xe9"] * 3, vocab_size=None, pattern="gpt2", progress=False)
    lines = tok.vocab_lines()
    assert "    32  [␣]  byte 0x20" in lines and "    10  [↵]  byte 0x0a" in lines
    assert "   195  [<c3>]  byte 0xc3" in lines
    assert all("\n" not in line and "\t" not in line for line in lines)


def test_cli_vocab_explain_pieces(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    path = tmp_path / "tok.json"
    assert main(["train", str(corpus), "--vocab-size", "300", "-q", "-o", str(path)]) == 0
    tok = fb.Tokenizer.load(path)
    capsys.readouterr()
    assert main(["vocab", "-t", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == tok.vocab_lines()
    assert main(["explain", "-t", str(path), "The cat", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "piece 'The'" in out and "piece ' cat'" in out and "\x1b" not in out
    assert [int(i) for line in out.splitlines() if line.startswith("  ids ") for i in line.split()[1:]] == tok.encode("The cat")
    assert main(["explain", "-t", str(path), "The cat", "--color"]) == 0
    assert "\x1b[" in capsys.readouterr().out
    assert main(["explain", "-t", str(path), "--tree", str(tok.vocab_size - 1)]) == 0
    assert capsys.readouterr().out.splitlines() == merge_tree(tok, tok.vocab_size - 1)
    assert main(["explain", "-t", str(path), "--tree", "99999"]) == 2
    assert "no such token" in capsys.readouterr().err
    (tmp_path / "in.txt").write_text("The cat sat", encoding="utf-8")
    assert main(["pieces", "-t", str(path), str(tmp_path / "in.txt"), "--color"]) == 0
    out = capsys.readouterr().out
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert [line.split()[0] for line in plain.splitlines()] == ["The", "␣cat", "␣sat"]
    assert out.count("\x1b[30;48;5;") == len(tok.encode("The cat sat"))
    assert main(["pieces", "-t", str(path), str(tmp_path / "in.txt")]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split()[-1] == "".join(f"[{visible(tok.decode([i]))}]" for i in tok.encode("The"))


def test_explain_shows_the_text_form_of_a_scheme_first(tok):
    from functionalbpe.teach.encode_trace import explain_lines

    lines = explain_lines(tok, "The CAT sat")
    assert lines[0].startswith("text form ") == bool(tok.scheme.atoms)
    ids = [int(i) for line in lines if line.startswith("  ids ") for i in line.split()[1:]]
    assert ids == tok.encode("The CAT sat")


def test_trace_and_vocab_keep_an_imported_vocabulary_ids():
    # A vocabulary imported from tiktoken keeps its own byte ids (here: reversed).
    from functionalbpe.schemes.plain import PlainScheme

    trained = fb.train(CORPUS, vocab_size=300, pattern="gpt2", progress=False)
    tok = fb.Tokenizer(PlainScheme("gpt2"), trained.merges, byte_ids=[255 - b for b in range(256)])
    for text in ["The cat sat", "naïve 😀", ""]:
        assert tok.trace(text).ids == tok.encode(text)
    lines = tok.vocab_lines()
    assert sorted(int(line.split()[0]) for line in lines) == list(range(tok.vocab_size))
    assert "   158  [a]  byte 0x61" in lines


@pytest.mark.parametrize("module", ["merge_trace", "vocab", "encode_trace", "explorer", "js_patterns"])
def test_examples_in_the_docstrings(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"functionalbpe.teach.{module}"))
    assert result.failed == 0 and result.attempted > 0

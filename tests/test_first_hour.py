"""What a newcomer meets in the first hour: messages that point the right way, the formats
and habits of the other libraries accepted, what was asked and not given said out loud."""
from __future__ import annotations

import warnings

import pytest

import functionalbpe as fb
from functionalbpe.cli import main

TEXT = ["the cat sat on the mat", "the dog sat on the log"] * 5


# -- options by other libraries' names ----------------------------------------------------------


@pytest.mark.parametrize("option, hint", [
    ("verbose", "progress=True"), ("show_progress", "progress=True"), ("min_freq", "min_frequency="),
    ("progres", "did you mean progress=?"), ("vocab_sise", "did you mean vocab_size=?"),
])
def test_an_unknown_option_names_the_right_one(option, hint):
    with pytest.raises(fb.FunctionalBPEError) as caught:
        fb.train(TEXT, vocab_size=270, **{option: True})
    message = str(caught.value)
    assert hint in message and repr(option) in message
    assert "PlainScheme.__init__" not in message and "unexpected keyword" not in message


def test_a_scheme_option_is_still_taken():
    tok = fb.train(TEXT, vocab_size=560, scheme="functional", case=False, progress=False)
    assert tok.scheme.options()["case"] is False


# -- corpora as other libraries give them ----------------------------------------------------


def test_batches_of_documents_train_as_the_documents_do():
    batches = iter([TEXT[:3], tuple(TEXT[3:7]), TEXT[7:]])
    assert fb.train(batches, vocab_size=270, progress=False) == fb.train(TEXT, vocab_size=270, progress=False)


def test_a_batch_of_something_else_is_refused_clearly():
    with pytest.raises(fb.FunctionalBPEError, match="a document must be a str .or a list of str"):
        fb.train([["a", 3]], vocab_size=260, progress=False)


def test_files_takes_a_list_of_paths(tmp_path):
    paths = []
    for k, text in enumerate(TEXT[:2]):
        path = tmp_path / f"{k}.txt"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    assert fb.files(paths).paths == fb.files(*paths).paths
    with pytest.raises(fb.CorpusError, match="not a int"):
        fb.files(3)


def test_a_corpus_that_is_a_path_warns_with_the_fix(tmp_path):
    path = tmp_path / "books.txt"
    path.write_text("\n".join(TEXT), encoding="utf-8")
    with pytest.warns(UserWarning, match=r"functionalbpe\.files\("):
        fb.train(str(path), vocab_size=260, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fb.train("no file is called this", vocab_size=256, progress=False)
    # A directory, and a glob pattern, are said the same way.
    for given, what in ((tmp_path, "the path of a directory"), (tmp_path / "*.txt", "a glob pattern that matches files")):
        with pytest.warns(UserWarning, match=f"which is {what}: training reads its {len(str(given))} characters"):
            fb.train(str(given), vocab_size=256, progress=False)


def test_an_empty_corpus_is_said_and_the_command_writes_nothing(tmp_path, capsys):
    with pytest.warns(fb.errors.SmallerVocabularyWarning, match="no two symbols side by side"):
        fb.train([""], vocab_size=300, progress=False)
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    out = tmp_path / "t.json"
    assert main(["train", str(tmp_path / "empty.txt"), "--vocab-size", "300", "-o", str(out)]) == 2
    assert "read 0 characters from 1 file" in capsys.readouterr().err and not out.exists()


def test_train_writes_no_file_of_another_library(tok, tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "a.txt"
    corpus.write_text("\n".join(TEXT), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    tok.to_hf(tmp_path / "tokenizer.json")  # a model's folder
    before = (tmp_path / "tokenizer.json").read_bytes()
    assert main(["train", str(corpus), "--vocab-size", "270", "-q"]) == 0  # the default is not HF's name
    assert fb.Tokenizer.load(tmp_path / "functionalbpe.json").vocab_size == 270
    assert main(["train", str(corpus), "--vocab-size", "270", "-o", "tokenizer.json"]) == 2
    assert "another library (hf)" in capsys.readouterr().err
    assert (tmp_path / "tokenizer.json").read_bytes() == before


# -- a smaller vocabulary than asked ---------------------------------------------------------------


def test_a_smaller_vocabulary_than_asked_is_said():
    with pytest.warns(fb.errors.SmallerVocabularyWarning, match="has 2[0-9]{2} ids, not the 5000 asked"):
        tok = fb.train(TEXT, vocab_size=5000, progress=False)
    assert tok.vocab_size < 5000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fb.train(TEXT, vocab_size=260, progress=False)  # reached: nothing said
        fb.train(TEXT, vocab_size=None, progress=False)  # "until no pair is left": nothing said


def test_the_command_says_it_in_one_line(tmp_path, capsys):
    corpus = tmp_path / "a.txt"
    corpus.write_text("\n".join(TEXT), encoding="utf-8")
    assert main(["train", str(corpus), "--vocab-size", "5000", "-o", str(tmp_path / "t.json")]) == 0
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if line.startswith("functionalbpe: warning:")]
    assert len(warning) == 1 and "not the 5000 asked" in warning[0]
    assert "training.py" not in err and "from 1 file " in err


# -- another library's file given to the wrong loader, or to the command -------------------


@pytest.fixture(scope="module")
def tok():
    return fb.train(TEXT, vocab_size=270, special_tokens=["<|endoftext|>"], progress=False)


def gpt2_files(tok, folder):
    import json

    (folder / "encoder.json").write_text(json.dumps(tok.get_vocab()), encoding="utf-8")
    lines = ["#version: 0.2"] + [" ".join(tok.id_to_token(i) for i in m) for m in tok.merges]
    (folder / "vocab.bpe").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "encoder.json", folder / "vocab.bpe"


def test_loading_another_librarys_file_names_the_right_loader(tok, tmp_path):
    tok.to_hf(tmp_path / "tokenizer.json")
    tok.to_tiktoken(tmp_path / "t.tiktoken")
    encoder, merges = gpt2_files(tok, tmp_path)
    for path, loader in ((tmp_path / "tokenizer.json", "from_hf"), (tmp_path / "t.tiktoken", "from_tiktoken"),
                         (encoder, "from_gpt2"), (merges, "from_gpt2")):
        with pytest.raises(fb.TokenizerFileError, match=f"load it with functionalbpe.Tokenizer.{loader}"):
            fb.Tokenizer.load(path)


def test_gpt2s_own_files_give_the_same_ids(tok, tmp_path):
    encoder, merges = gpt2_files(tok, tmp_path)
    gpt2 = fb.Tokenizer.from_gpt2(encoder, merges)
    text = "the cat sat on the log<|endoftext|>the mat"
    assert gpt2.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert gpt2.special_tokens == tok.special_tokens
    tokenizers = pytest.importorskip("tokenizers")  # HF reads the same files
    hf = tokenizers.Tokenizer(tokenizers.models.BPE.from_file(str(encoder), str(merges)))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    assert hf.encode("the cat sat on the log").ids == gpt2.encode("the cat sat on the log")


def test_an_error_in_gpt2s_files_names_both_files(tok, tmp_path):
    encoder, merges = gpt2_files(tok, tmp_path)
    lines = merges.read_text(encoding="utf-8").splitlines()
    merges.write_text("\n".join(lines + [lines[-1]]) + "\n", encoding="utf-8")  # a merge given twice
    with pytest.raises(fb.FunctionalBPEError) as caught:
        fb.Tokenizer.from_gpt2(encoder, merges)
    assert str(caught.value).startswith(f"{encoder} and {merges}: ") and "document" not in str(caught.value)


def test_the_command_takes_any_librarys_tokenizer(tok, tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat", encoding="utf-8")
    tok.to_hf(tmp_path / "hf")
    tok.to_tiktoken(tmp_path / "t.tiktoken")
    gpt2_files(tok, tmp_path)
    expected = " ".join(map(str, tok.encode("the cat sat")))
    for given in (tmp_path / "hf", tmp_path / "t.tiktoken", tmp_path / "encoder.json"):
        # A rank file holds no pattern: any but OpenAI's published ones needs it said.
        pattern = ["--pattern", tok.pattern] if given.suffix == ".tiktoken" else []
        assert main(["encode", "-t", str(given), str(corpus), *pattern]) == 0
        assert capsys.readouterr().out.strip() == expected, given


# -- pieces and explain: one way to give the text -------------------------------------------------


def test_pieces_and_explain_take_a_text_or_a_file(tok, tmp_path, capsys):
    path = tmp_path / "tok.json"
    tok.save(path)
    notes = tmp_path / "notes.txt"
    notes.write_text("the dog", encoding="utf-8")
    for command in ("pieces", "explain"):
        outputs = []
        for args in (["the dog"], [str(notes)], ["--input", str(notes)], ["--text", "the dog"]):
            assert main([command, "-t", str(path), *args, "--no-color"]) == 0
            outputs.append(capsys.readouterr().out)
        assert len(set(outputs)) == 1 and "dog" in outputs[0], command
        assert main([command, "-t", str(path), "--text", str(notes), "--no-color"]) == 0
        assert "notes" in capsys.readouterr().out  # --text: the string, though a file has that name


def test_encode_lines_then_decode_gives_the_lines_back(tok, tmp_path, capsys):
    path = tmp_path / "tok.json"
    tok.save(path)
    text = tmp_path / "in.txt"
    text.write_text("the cat\nthe dog\n", encoding="utf-8")
    assert main(["encode", "-t", str(path), "--lines", str(text), "-o", str(tmp_path / "ids.txt")]) == 0
    for lines, expected in ((["--lines"], "the cat\nthe dog\n"), ([], "the cat\nthe dog")):
        assert main(["decode", "-t", str(path), *lines, str(tmp_path / "ids.txt")]) == 0
        assert capsys.readouterr().out == expected


def test_pieces_columns_align_on_wide_characters(tmp_path, capsys):
    from functionalbpe.util.display import width

    cjk = fb.train(["日本語のテキスト 日本語 テキスト"] * 3, vocab_size=270, progress=False)
    path = tmp_path / "tok.json"
    cjk.save(path)
    assert main(["pieces", "-t", str(path), "--text", "日本語 テキスト ab", "--no-color"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert any(width(r.split(" ")[0]) > len(r.split(" ")[0]) for r in rows)  # wide pieces are shown
    # every row's ids begin in the same terminal column (len() would count the CJK rows short)
    assert len({width(r[: r.index(next(t for t in r.split(" ") if t.isdigit()))]) for r in rows}) == 1, rows


# -- a token as a person reads it ----------------------------------------------------------------


@pytest.mark.parametrize("scheme, options, text, expected", [
    ("functional", {}, "Hello", ["⟨CAP 0⟩", "hello"]),
    ("markers", {"case": True}, "The cat", ["↑¦the¦", "¦cat¦"]),
    ("plain", {}, "The cat", ["The", "␣cat"]),
])
def test_token_text_is_readable_for_every_scheme(scheme, options, text, expected):
    tok = fb.train(["The cat sat. The cat. Hello hello the cat"] * 3, vocab_size=None, scheme=scheme,
                   progress=False, **options)
    shown = [tok.token_text(i) for i in tok.encode(text)]
    assert shown == expected
    assert "\ufffd" not in "".join(shown)
    assert tok.vocab_lines()[-1].split()[0].isdigit()  # vocab_lines shows the same forms


def test_token_text_of_a_special_and_of_no_token(tok):
    assert tok.token_text(tok.special_tokens["<|endoftext|>"]) == "<|endoftext|>"
    with pytest.raises(fb.UnknownTokenError):
        tok.token_text(10**6)


# -- several languages on the command line ---------------------------------------------------------


def test_parity_without_dev_speaks_the_commands_language(tmp_path, capsys):
    en, el = tmp_path / "en.txt", tmp_path / "el.txt"
    en.write_text("the cat sat on the mat\n" * 5, encoding="utf-8")
    el.write_text("η γάτα κάθεται στο χαλί\n" * 5, encoding="utf-8")
    base = ["train", "--lang", f"en={en}", "--lang", f"el={el}", "--objective", "parity", "--vocab-size", "300",
            "-q", "-o", str(tmp_path / "t.json")]
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "--dev NAME=PATH" in err and "neither was given" in err and "not both" not in err
    assert main(base + ["--target-ratio", "en=4", "--target-ratio", "el=4"]) == 0
    assert fb.Tokenizer.load(tmp_path / "t.json").training["objective"] == "parity"


# -- progress -----------------------------------------------------------------------------------


def test_counting_progress_knows_the_total_and_ends_at_it(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("the cat sat on the mat\n" * 2000, encoding="utf-8")
    seen = []
    fb.train(fb.files(path), vocab_size=260, progress=lambda *update: seen.append(update))
    counting = [u for u in seen if u[0] == "counting"]
    assert counting[-1] == ("counting", path.stat().st_size, path.stat().st_size, "done")
    assert all(total == path.stat().st_size for _, _, total, _ in counting)


def test_the_bar_shows_share_rate_and_time_left():
    from functionalbpe.util.progress import Progress

    line = Progress(False, "counting", total=10_000_000, unit=" MB", scale=1e6).line(2_500_000, 5.0)
    assert "2.5/10.0 MB 25%" in line and "0.5 MB/s" in line and "15s left" in line
    assert Progress(False, "counting", unit=" MB", scale=1e6).line(300_000, 0.1).startswith("counting: 0.3 MB ")


def test_a_text_given_to_encode_to_file_as_a_path_says_how_to_encode_it(tok, tmp_path):
    with pytest.raises(fb.CorpusError, match=r"no such file.*pass it in a list"):
        tok.encode_to_file("the cat sat", tmp_path / "ids.npy")
    summary = tok.encode_to_file(["the cat sat"], tmp_path / "ids.npy", progress=False)
    assert "from 1 document," in str(summary)


def test_names_tiktoken_and_hf_users_reach_for(tmp_path):
    np = pytest.importorskip("numpy")
    tok = fb.train(TEXT, vocab_size=270, special_tokens=["<s>"], progress=False)
    docs = ["the cat <s>", "sat"]
    assert tok.encode_ordinary_batch(docs) == [tok.encode_ordinary(d) for d in docs]
    assert tok.encode_to_numpy("the cat").dtype == np.uint32
    assert tok.encode_to_numpy("the cat").tolist() == tok.encode("the cat")
    assert tok.max_token_value == tok.vocab_size - 1 == tok.special_tokens["<s>"]
    assert tok.name == "functionalbpe-plain-gpt4-270"
    assert tok("the cat") == {"input_ids": tok.encode("the cat"), "attention_mask": [1] * len(tok.encode("the cat"))}
    assert tok(docs)["input_ids"] == [tok.encode_ordinary(d) for d in docs]
    ids = tok.encode("the cat<s>", allowed_special="all")
    assert tok.batch_decode([ids]) == ["the cat<s>"] and tok.batch_decode([ids], skip_special_tokens=True) == ["the cat"]
    assert tok.convert_ids_to_tokens(ids) == [tok.id_to_token(i) for i in ids] and tok.convert_ids_to_tokens(ids[0]) == tok.id_to_token(ids[0])
    assert tok.encode("the cat", add_special_tokens=False) == tok.encode("the cat")
    with pytest.raises(fb.FunctionalBPEError, match="adds no special token on its own"):
        tok.encode("the cat", add_special_tokens=True)


def test_cli_options_that_would_be_ignored_are_refused(tok, tmp_path, capsys):
    (tmp_path / "a.txt").write_text("the cat sat", encoding="utf-8")
    tok.save(tmp_path / "t.json")
    assert main(["encode", "-t", str(tmp_path / "t.json"), str(tmp_path / "a.txt"), "-o", str(tmp_path / "ids.pt")]) == 2
    assert "cannot tell the format from the suffix '.pt'" in capsys.readouterr().err
    assert not (tmp_path / "ids.pt").exists()
    assert main(["encode", "-t", str(tmp_path / "t.json"), str(tmp_path / "a.txt"), "--field", "body"]) == 2
    assert "--field body names the field of .jsonl" in capsys.readouterr().err
    assert main(["train", str(tmp_path / "a.txt"), "--vocab-size", "258", "--field", "body", "-o", str(tmp_path / "n.json")]) == 2
    with pytest.warns(UserWarning, match="named more than once"):
        assert len(fb.files(tmp_path / "a.txt", tmp_path / "a.txt", tmp_path / "*.txt")) == 1


def test_gpt2_files_with_a_vocab_bpe_cut_short_are_refused(tok, tmp_path):
    encoder, merges = gpt2_files(tok, tmp_path)
    whole = merges.read_text(encoding="utf-8").splitlines()
    assert fb.Tokenizer.from_gpt2(encoder, merges).encode("the cat sat") == tok.encode("the cat sat")
    for kept in (whole[:1], whole[: len(whole) // 2]):  # empty, and half of it
        merges.write_text("\n".join(kept) + "\n", encoding="utf-8")
        with pytest.raises(fb.TokenizerFileError, match=r"is made by no merge of .*vocab.bpe .*cut short"):
            fb.Tokenizer.from_gpt2(encoder, merges)

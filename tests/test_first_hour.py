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

"""Every option of every command says what it does in --help, and the CLI's special-token
error names the CLI's flag rather than the API's keyword."""
from __future__ import annotations

import argparse

import pytest

import functionalbpe as fb
from functionalbpe.cli import build_parser, main


def commands():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_option_has_help(name):
    parser = commands()[name]
    assert parser.description, name
    silent = [a.option_strings or [a.dest] for a in parser._actions if not (a.help or "").strip()]
    assert not silent, f"{name}: options without help text: {silent}"


def test_train_help_names_every_option(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for flag, words in [("--scheme", "how text is turned"), ("--min-frequency", "fewer times"),
                        ("--merge-policy", "operators"), ("--backend", "same merges")]:
        assert flag in out and words in out, flag


def test_the_special_token_error_names_the_flag(tmp_path, capsys):
    tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
    tok.save(tmp_path / "t.json")
    (tmp_path / "in.txt").write_text("ab\nab <s> ab\n", encoding="utf-8")
    assert main(["encode", "-t", str(tmp_path / "t.json"), str(tmp_path / "in.txt")]) == 2
    err = capsys.readouterr().err
    assert "document 1 contains the special token '<s>' at offset 3" in err or "'<s>' at offset" in err
    assert "--allow-special" in err and "allowed_special" not in err
    assert main(["encode", "-t", str(tmp_path / "t.json"), "--allow-special", str(tmp_path / "in.txt")]) == 0

"""Weighted language mixes: a dict corpus with weights or a temperature is exactly the
training on the equivalently scaled table; equal weights are the concatenation."""
from __future__ import annotations

from fractions import Fraction

import pytest

import functionalbpe as fb
from functionalbpe.core.language_mix import combine, multipliers, scale, table_bytes
from functionalbpe.core.piecetable import PieceTable
from functionalbpe.errors import FunctionalBPEError
from functionalbpe.schemes.plain import PlainScheme
from functionalbpe.training import count_pieces, train_from_counts

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Tiny alphabets so that pairs repeat and overlap (aaa, abab) all the time.
documents = st.lists(st.text("ab c", min_size=1, max_size=12), min_size=1, max_size=6)
languages = st.dictionaries(st.sampled_from(["en", "de", "el", "ru"]), documents, min_size=1, max_size=4)


def train(corpus, **kw):
    return fb.train(corpus, vocab_size=280, pattern="gpt2", progress=False, **kw)


def learned(tok):
    """What training decided: the merges and their counts (the file also records the mix)."""
    return tok.merges, tok.merge_counts


@settings(max_examples=30)
@given(corpus=languages)
def test_no_weights_is_the_concatenation(corpus):
    joined = [doc for docs in corpus.values() for doc in docs]
    plain = train(joined)
    assert train(corpus) == plain
    assert learned(train(corpus, weights={lang: 1.0 for lang in corpus})) == learned(plain)
    assert learned(train(corpus, weights={lang: 7 for lang in corpus})) == learned(plain)
    assert learned(train(corpus, temperature=1.0)) == learned(plain)


@settings(max_examples=30)
@given(corpus=languages, data=st.data())
def test_integer_weights_repeat_the_language(corpus, data):
    # Weights k_l with the smallest 1: the same as k_l copies of each language's documents.
    ks = {lang: data.draw(st.integers(1, 4), label=lang) for lang in corpus}
    k_min = min(ks.values())
    repeated = [doc for lang, docs in corpus.items() for _ in range(ks[lang] // k_min) for doc in docs]
    if all(k % k_min == 0 for k in ks.values()):
        assert learned(train(corpus, weights=ks)) == learned(train(repeated))


def scaled_by_hand(corpus, factors):
    """The mixed table, computed the slow way: {piece: sum of round-half-up(count * m)}."""
    total = {}
    for lang, docs in corpus.items():
        for piece, c in count_pieces(docs, pattern="gpt2").items():
            exact = c * factors[lang]
            total[piece] = total.get(piece, 0) + int(exact + Fraction(1, 2)) // 1
    return total


@settings(max_examples=30)
@given(corpus=languages, data=st.data())
def test_weights_equal_the_scaled_table(corpus, data):
    weights = {lang: data.draw(st.sampled_from([0.25, 0.5, 1.0, 1.3, 2.0, 3.75]), label=lang) for lang in corpus}
    w_min = min(Fraction(w) for w in weights.values())
    factors = {lang: Fraction(w) / w_min for lang, w in weights.items()}
    expected = train_from_counts(scaled_by_hand(corpus, factors), PlainScheme("gpt2"), vocab_size=280)
    for backend in ("python", "auto"):
        assert learned(train(corpus, weights=weights, backend=backend)) == learned(expected)


@settings(max_examples=30)
@given(corpus=languages, alpha=st.sampled_from([0.0, 0.3, 0.7, 2.0]))
def test_temperature_is_weights_from_sizes(corpus, alpha):
    sizes = {lang: sum(len(p.encode()) * c for p, c in count_pieces(docs, pattern="gpt2").items())
             for lang, docs in corpus.items()}
    if float(alpha).is_integer():  # an integral exponent is exact
        raw = {lang: Fraction(max(n, 1)) ** int(alpha - 1) for lang, n in sizes.items()}
    else:
        raw = {lang: float(max(n, 1)) ** (alpha - 1.0) for lang, n in sizes.items()}
    assert learned(train(corpus, temperature=alpha)) == learned(train(corpus, weights=raw))


def test_multipliers_at_temperature_zero_even_out_the_languages():
    sizes = {"en": 3000, "el": 120, "hi": 7}
    m = multipliers(sizes, None, 0)
    assert min(m.values()) == 1
    assert len({m[lang] * n for lang, n in sizes.items()}) == 1  # every language weighs the same


def test_scale_rounds_half_up_and_keeps_every_piece():
    table = PieceTable.from_dict({"a": 1, "b": 2, "c": 3})
    assert scale(table, Fraction(3, 2)).to_dict() == {"a": 2, "b": 3, "c": 5}  # 1.5, 3, 4.5
    assert scale(table, Fraction(1)) is table
    assert table_bytes(PieceTable.from_dict({"ab": 2, "é": 3})) == 4 + 6
    assert combine([table, PieceTable.from_dict({"d": 1, "a": 2})]).to_dict() == {"a": 3, "b": 2, "c": 3, "d": 1}


def test_a_language_the_weights_leave_out_weighs_one_as_on_the_command_line():
    corpus = {"en": ["the cat sat on the mat"] * 3, "de": ["die Katze sass auf der Matte"] * 2}
    some = train(corpus, weights={"de": 4})
    every = train(corpus, weights={"en": 1, "de": 4})
    assert some.merges == every.merges
    assert some.merges != train(corpus).merges


@pytest.mark.parametrize("kwargs, message", [
    (dict(weights={"en": 1}, temperature=0.3), "not both"),
    (dict(weights={"en": 1, "de": 0}), "positive"),
    (dict(weights={"en": 1, "de": float("nan")}), "positive"),
    (dict(weights={"en": 1, "de": 1, "fr": 1}), "'fr'"),
    (dict(temperature="hot"), "temperature"),
])
def test_bad_mixes_are_clear_errors(kwargs, message):
    with pytest.raises(FunctionalBPEError, match=message):
        train({"en": ["the cat"], "de": ["die Katze"]}, **kwargs)


def test_weights_need_a_dict_corpus():
    with pytest.raises(FunctionalBPEError, match="dict"):
        train(["the cat"], weights={"en": 1})
    with pytest.raises(FunctionalBPEError, match="language"):
        train({"": ["x"]})
    with pytest.raises(FunctionalBPEError, match="at least one"):
        train({})


def test_a_mix_works_with_every_scheme():
    corpus = {"en": ["The Cat sat, 12 times."] * 3, "de": ["Die Katze saß 3-mal."] * 2}
    for scheme in ("functional", "markers"):
        plain = fb.train([d for docs in corpus.values() for d in docs], vocab_size=600, scheme=scheme, progress=False)
        assert fb.train(corpus, vocab_size=600, scheme=scheme, progress=False) == plain
        mixed = fb.train(corpus, vocab_size=600, scheme=scheme, progress=False, weights={"en": 1, "de": 4})
        assert mixed.decode(mixed.encode("Die Katze")) == "Die Katze"


def test_the_file_records_the_mix(tmp_path):
    tok = train({"en": ["the cat"], "de": ["die Katze"]}, weights={"en": 1, "de": 2.5})
    assert tok.training["objective"] == "frequency"
    assert tok.training["mix"]["multipliers"] == {"en": "1", "de": "5/2"}
    tok.save(tmp_path / "t.json")
    assert fb.Tokenizer.load(tmp_path / "t.json") == tok


def test_the_examples_in_the_docstrings():
    import doctest

    from functionalbpe.core import language_mix, parity

    assert doctest.testmod(language_mix).failed == 0
    assert doctest.testmod(parity).failed == 0


def test_the_command_line_trains_languages_as_the_api(tmp_path):
    """`train --lang ... --weight ...` and `--objective parity --dev ...` give the tokenizers of
    fb.train with the same dict corpus and options."""
    from functionalbpe.cli import main

    texts = {"en": "the cat sat on the mat. " * 30, "el": "η γάτα κάθεται στο χαλί. " * 5}
    dev = {"en": "the cat sat.", "el": "η γάτα κάθεται."}
    args = []
    for lang, text in texts.items():
        (tmp_path / f"{lang}.txt").write_text(text, encoding="utf-8")
        (tmp_path / f"{lang}.dev").write_text(dev[lang], encoding="utf-8")
        args += ["--lang", f"{lang}={tmp_path / f'{lang}.txt'}"]
    out = tmp_path / "tok.json"
    assert main(["train", *args, "--weight", "el=3", "--vocab-size", "300", "-o", str(out), "-q"]) == 0
    api = fb.train(texts, vocab_size=300, weights={"en": 1, "el": 3}, progress=False)
    assert fb.Tokenizer.load(out).merges == api.merges
    devs = [a for lang in texts for a in ("--dev", f"{lang}={tmp_path / f'{lang}.dev'}")]
    assert main(["train", *args, *devs, "--objective", "parity", "--vocab-size", "300", "-o", str(out), "-q"]) == 0
    api = fb.train(texts, vocab_size=300, objective="parity", dev=dev, progress=False)
    assert fb.Tokenizer.load(out).merges == api.merges
    assert fb.Tokenizer.load(out).training == api.training
    assert main(["train", *args, "--weight", "fr=2", "--vocab-size", "300", "-o", str(out), "-q"]) == 2
    assert main(["train", str(tmp_path / "en.txt"), "--weight", "en=2", "--vocab-size", "300", "-o", str(out)]) == 2

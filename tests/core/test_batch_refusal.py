"""Disallowed special tokens in a batch are looked for by the encoder's workers
(core/encoder.Refusal, fbpe_needles in csrc/lib/encode/encode_text.c): a batch must raise exactly
the error that refusing text by text raises, or give exactly the ids of encoding text by
text, for lists, flat arrays and packed bytes, on one thread or several."""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.errors import SpecialTokenError

from .test_parallel_encode import tiny_units  # noqa: F401  (a fixture: units of a few bytes)

# Needles with different first bytes, one of a single character, one that is U+FFFD (which
# a lone surrogate becomes in UTF-8, though the text does not hold it), one made of two.
SPECIALS = ["<|eot|>", "<|a|>", "[SEP]", "é", "\ufffd", "ab<|a|>"]


@pytest.fixture(scope="module")
def tok():
    return fb.train(["hello world, a b c é <|x|> [SE] " * 20], vocab_size=300, special_tokens=SPECIALS,
                    progress=False)


def one_by_one(tok, texts, **specials):
    """The ids of each text, or the error of the first that is refused."""
    try:
        return [tok.encode(t, **specials) for t in texts]
    except SpecialTokenError as exc:
        return ("error", exc.token, exc.offset, str(exc))


def batched(tok, texts, how, threads, **specials):
    try:
        if how == "lists":
            return tok.encode_batch(texts, threads=threads, **specials)
        if how == "flat":
            flat = tok.encode_batch(texts, threads=threads, flat=True, **specials)
            return [list(map(int, flat[k])) for k in range(len(texts))]
        data, counts = tok.encode_batch_packed(texts, threads, **specials)
        ids = [int.from_bytes(data[4 * k:4 * k + 4], "little") for k in range(len(data) // 4)]
        out, at = [], 0
        for n in counts:
            out.append(ids[at:at + n])
            at += n
        return out
    except SpecialTokenError as exc:
        return ("error", exc.token, exc.offset, str(exc))


pieces = st.sampled_from(["hello", " world", "<|eot", "|>", "<|", "a|>", "é", "e", "\ud800", "\ufffd", "[SEP",
                          "]", "ab", "<|a|>", "\n", "日本", "[SEP]", "x"])
texts = st.lists(st.lists(pieces, max_size=8).map("".join), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(texts=texts, how=st.sampled_from(["lists", "flat", "packed"]), threads=st.sampled_from([1, 2]),
       disallowed=st.sampled_from(["all", (), ("[SEP]",), ("é", "<|a|>")]))
def test_a_batch_refuses_as_text_by_text(tok, texts, how, threads, disallowed):
    assert batched(tok, texts, how, threads, disallowed_special=disallowed) == \
        one_by_one(tok, texts, disallowed_special=disallowed)


@pytest.mark.parametrize("how", ["lists", "flat", "packed"])
def test_a_large_batch_on_the_workers(tok, how):
    # Above the size at which the workers share the batch: the first refused text is named
    # whichever worker found which.
    texts = ["hello world " * 50] * 600 + ["a [SEP] b", "c <|eot|>"] + ["hello"] * 100
    assert batched(tok, texts, how, 2) == one_by_one(tok, texts)
    clean = texts[:600] + ["a [SE] b"] * 50
    assert batched(tok, clean, how, 2) == one_by_one(tok, clean)


def test_a_lone_surrogate_is_not_the_replacement_character(tok):
    # Its UTF-8 is U+FFFD's, a needle here, but the text does not hold the token: encoded.
    texts = ["a\ud800b"] * 3
    assert tok.encode_batch(texts) == one_by_one(tok, texts)
    with pytest.raises(SpecialTokenError):
        tok.encode_batch(["a\ufffdb"])


# -- a large batch in steps: lists made while the workers encode the next step ----------------

@pytest.fixture
def tiny_steps(monkeypatch):
    from functionalbpe.core._native import NATIVE

    if NATIVE.encoder is None:
        pytest.skip("the compiled encoder is not built")
    monkeypatch.setattr(NATIVE.encoder, "STEPPED_MIN_CHARS", 1)
    monkeypatch.setattr(NATIVE.encoder, "PARALLEL_MIN_BYTES", 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.lists(pieces, max_size=8).map("".join), min_size=16, max_size=60),
       disallowed=st.sampled_from(["all", (), ("[SEP]",)]))
def test_steps_give_the_ids_and_the_first_error(tok, tiny_steps, texts, disallowed):
    assert batched(tok, texts, "lists", 2, disallowed_special=disallowed) == \
        one_by_one(tok, texts, disallowed_special=disallowed)


def test_steps_with_refusals_in_late_steps_only(tok, tiny_steps):
    texts = ["hello world"] * 100 + ["b <|a|>"] + ["x"] * 20 + ["[SEP]"]
    assert batched(tok, texts, "lists", 2) == one_by_one(tok, texts)
    # A needle's bytes in a late step that are not the token: every text encoded, in order.
    texts = ["hello world"] * 100 + ["a\ud800b"] + ["x e"] * 20
    assert tok.encode_batch(texts, threads=2) == [tok.encode(t) for t in texts]
    # ... and a token in a step after that one is still refused.
    texts = [""] * 13 + ["\ud800", "", "[SEP]"]
    assert batched(tok, texts, "lists", 2) == one_by_one(tok, texts)


# -- one text: the search in C, on the workers for a long text ----------------------------------

def refused_or_ids(call):
    try:
        return call()
    except SpecialTokenError as exc:
        return ("error", exc.token, exc.offset, str(exc))


def python_refusal_then_ids(tok, text, disallowed):
    """What encode gives when the text is first refused by the Python search alone."""
    _, refused = tok.special_policy.sets(frozenset(), disallowed)
    try:
        tok.special_policy.refuse(text, refused)
    except SpecialTokenError as exc:
        return ("error", exc.token, exc.offset, str(exc))
    return tok.encode_ordinary(text, threads=1)


long_text = st.lists(st.sampled_from(["hello", " world", ". ", "\n", "<|a", "|>", "<|a|>", "[SE", "P]", "é",
                                      "\ud800", "ab", "日本語。"]), max_size=80).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=long_text, threads=st.sampled_from([1, 2, 4]),
       disallowed=st.sampled_from(["all", ("[SEP]",), ("<|a|>", "é")]))
def test_one_text_refused_as_the_python_search_refuses(tok, tiny_units, text, threads, disallowed):
    # Tokens cut in two by the parts ('<|a' + '|>', '[SE' + 'P]') are found too.
    assert refused_or_ids(lambda: tok.encode(text, threads=threads, disallowed_special=disallowed)) == \
        python_refusal_then_ids(tok, text, disallowed)


def test_a_token_across_a_cut(tok, tiny_units):
    # The token at every place of a text that is cut every few bytes: across a cut at some.
    for shift in range(24):
        text = "x" * shift + "hello world. " * 12 + "<|a|>" + " hello. world" * 12
        assert refused_or_ids(lambda: tok.encode(text, threads=4))[:3] == ("error", "<|a|>", shift + 156)


class Text(str):
    """A str subclass: its characters are not stored as a compact str's are."""


@pytest.mark.parametrize("how", ["lists", "flat"])
def test_every_kind_of_str_is_read_where_it_lies(tok, tiny_steps, how):
    """Compact ASCII, other compact text and str subclasses (ASCII or not) in one batch,
    taken in step by step: the ids of encoding each alone."""
    texts = ["hello world", Text("hello world"), "héllo wörld 🙂", Text("a b c é"), ""] * 8
    assert batched(tok, texts, how, 2) == one_by_one(tok, texts)

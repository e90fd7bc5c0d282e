"""The fast trainer (the C merge loop behind core/trainer.py) equals the Python ones, merge
for merge, counts included: the incremental heap trainer everywhere, and the lesson
(core/reference.py) wherever the input is small enough for it.

Most tests compare the backends and so need the compiled module; they are skipped on the
pure-Python path. The face that takes a counted table also converts pieces, so its tests
run on both paths.
"""
from __future__ import annotations

import functools
import os
import signal
import threading
import time
from array import array

import pytest

from functionalbpe.core import alphabet as ab
from functionalbpe.core import reference
from functionalbpe.core import trainer as face
from functionalbpe.core._native import NATIVE
from functionalbpe.core.alphabet import POLICY_CODES, Alphabet, Atom
from functionalbpe.core.piecetable import PieceTable
from functionalbpe.core.trainer import heap_train
from functionalbpe.errors import FunctionalBPEError
from functionalbpe.training import count_pieces

from ..conftest import read_corpus

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

trainer = NATIVE.trainer
needs_native = pytest.mark.skipif(trainer is None, reason="the compiled trainer is not built")
POLICIES = sorted(POLICY_CODES)


fast_merges = functools.partial(face.learn_merges_from_symbols, backend="fast")


def both(pieces, num_merges, first_id, **options):
    """Train with the C loop, the heap trainer and the lesson; return the merges after
    checking that all three agree."""
    expected = reference.train(pieces, num_merges, first_id, **options)
    assert heap_train(pieces, num_merges, first_id, **options) == expected
    assert fast_merges(pieces, num_merges, first_id, **options) == expected
    return expected


@pytest.fixture
def tiny_slices(monkeypatch):
    """Hand control back to Python after every few merges: the result must not change."""
    if trainer is not None:
        monkeypatch.setattr(trainer, "slice_seconds", 0.0)


# -- the merge policy: the C copy against alphabet's ------------------------------------


@needs_native
def test_policy_constants_match_alphabet():
    assert trainer.FLAGS == {
        "TEXT": ab.TEXT, "OPERATOR": ab.OPERATOR, "BOUNDARY": ab.BOUNDARY, "SHIFT": ab.SHIFT,
        "KIND_MASK": ab.KIND_MASK, "STARTS_WITH_BOUNDARY": ab.STARTS_WITH_BOUNDARY,
        "ENDS_WITH_BOUNDARY": ab.ENDS_WITH_BOUNDARY, "SHIFT_MERGES": ab.SHIFT_MERGES,
    }
    assert trainer.POLICY_CODES == POLICY_CODES


@needs_native
@pytest.mark.parametrize("policy", sorted(POLICY_CODES.values()) + [3])
def test_policy_matches_alphabet_for_every_flag_combination(policy):
    for left in range(128):
        for right in range(128):
            assert trainer.can_merge(policy, left, right) == ab.can_merge(policy, left, right)
            assert trainer.merged_flags(left, right) == ab.merged_flags(left, right)


# -- hypothesis: tiny alphabets, overlaps everywhere --------------------------------------

COUNTS = st.integers(1, 5) | st.integers(2**32, 2**40)


def piece_counts(symbols, max_len=24, max_pieces=24):
    piece = st.lists(st.sampled_from(symbols), max_size=max_len).map(tuple)
    return st.dictionaries(piece, COUNTS, max_size=max_pieces)


@needs_native
@given(
    pieces=piece_counts(tuple(b"ab")) | piece_counts(tuple(b"aab ")),
    num_merges=st.none() | st.integers(0, 40),
    min_frequency=st.sampled_from([1, 2, 3, 7, 2**33]),
)
def test_equals_reference_on_tiny_alphabets(pieces, num_merges, min_frequency):
    both(pieces, num_merges, 256, min_frequency=min_frequency)


@needs_native
@given(pieces=piece_counts(tuple(b"a"), max_len=40))
def test_equals_reference_on_runs_of_one_symbol(pieces):
    both(pieces, None, 256)


@needs_native
@given(
    pieces=piece_counts(tuple(b"abc"), max_len=300, max_pieces=6) | piece_counts(tuple(b"aab"), max_len=120),
    num_merges=st.none() | st.integers(0, 60),
)
def test_equals_reference_on_long_pieces(pieces, num_merges):
    # SuperBPE's second stage has pieces of hundreds of symbols: the C loop looks for the
    # merged pair eight symbols at a time and moves the runs between matches whole.
    both(pieces, num_merges, 256)


@needs_native
@given(
    pieces=piece_counts((0, 1, 2, 3), max_len=60, max_pieces=30) | piece_counts(tuple(range(40)), max_len=30),
    num_merges=st.none() | st.integers(0, 40),
    threads=st.integers(2, 17),
    policy=st.sampled_from(POLICIES),
    split=st.sampled_from(["shards", "ranges"]),
)
def test_first_pairs_counted_on_threads_give_the_same_merges(pieces, num_merges, threads, policy, split):
    # Each thread counts the pairs of its own shard of the pair table (the high bits of a
    # pair's hash), reading every piece; or, where the pairs are few, every pair of its own run
    # of the pieces, added to the loop's table in order: the merges are those of one thread,
    # for any number.
    with pytest.MonkeyPatch.context() as patch:
        # split even these few pieces, one way or the other
        patch.setattr(trainer, "shard_min_pairs", 0 if split == "shards" else 1 << 62)
        patch.setattr(trainer, "range_min_pieces", 0)
        flags = [ab.TEXT] * 40
        expected = reference.train(pieces, num_merges, 40, flags=flags, merge_policy=policy)
        for workers in (1, threads):
            assert face.learn_merges_from_symbols(pieces, num_merges, 40, flags=flags, merge_policy=policy,
                                                  backend="fast", threads=workers) == expected


@needs_native
@given(
    data=st.data(),
    num_symbols=st.integers(1, 6),
    policy=st.sampled_from(POLICIES),
    num_merges=st.none() | st.integers(0, 30),
    min_frequency=st.sampled_from([1, 2, 5]),
)
def test_equals_reference_with_atoms_and_random_flags(data, num_symbols, policy, num_merges,
                                                       min_frequency):
    # ids 0 .. num_symbols-1 stand for bytes and atoms alike; the kinds are what matter
    flags = data.draw(st.lists(st.integers(0, 63), min_size=num_symbols, max_size=num_symbols))
    pieces = data.draw(piece_counts(tuple(range(num_symbols))))
    both(pieces, num_merges, num_symbols, flags=flags, merge_policy=policy,
         min_frequency=min_frequency)


ATOM_KINDS = (ab.OPERATOR, ab.BOUNDARY, ab.SHIFT, ab.TEXT)


@st.composite
def alphabets_and_pieces(draw):
    """An alphabet with a few atoms of random kinds, and text-form pieces that mix atoms,
    ASCII, multi-byte characters and a private-use character that is *not* an atom."""
    kinds = draw(st.lists(st.sampled_from(ATOM_KINDS), max_size=4))
    atoms = [Atom(chr(0xE000 + i), f"A{i}", kind, f"<{i}>") for i, kind in enumerate(kinds)]
    alphabet = Alphabet(atoms=atoms)
    chars = "ab é" + "".join(a.char for a in atoms) + "\ue0ff"
    piece = st.lists(st.sampled_from(chars), max_size=16).map("".join)
    pieces = draw(st.dictionaries(piece, COUNTS, max_size=20))
    return alphabet, pieces


@given(
    case=alphabets_and_pieces(),
    policy=st.sampled_from(POLICIES),
    num_merges=st.none() | st.integers(0, 30),
)
def test_text_form_equals_reference_on_symbols(case, policy, num_merges):
    alphabet, pieces = case
    symbols = {alphabet.symbols(piece): count for piece, count in pieces.items()}
    expected = reference.train(symbols, num_merges, alphabet.num_fixed,
                               flags=alphabet.base_flags(), merge_policy=policy)
    table = PieceTable.from_dict(pieces)
    for backend in ("python", "auto"):  # auto: the C loop where it is built
        assert face.learn_merges(table, alphabet, num_merges, merge_policy=policy, backend=backend) == expected


def flat(pieces):
    """{str: count} laid out as train_merges_utf8 takes it."""
    encoded = [p.encode("utf-8") for p in pieces]
    offsets = array("q", [0])
    for e in encoded:
        offsets.append(offsets[-1] + len(e))
    return b"".join(encoded), offsets, array("q", pieces.values())


# -- edges ---------------------------------------------------------------------------------


@needs_native
def test_known_answer_and_slices(tiny_slices):
    merges = both({tuple(b"aaabdaaabac"): 1}, 3, 256)
    assert merges == [(97, 97, 4), (97, 98, 2), (256, 257, 2)]


@needs_native
@pytest.mark.parametrize("pieces", [{}, {(97,): 5, (): 3}, {(97, 97): 0, (98, 98): -4}])
def test_nothing_to_merge(pieces):
    assert both(pieces, None, 256) == []
    assert both(pieces, 10, 256) == []


@needs_native
def test_num_merges_zero_and_negative():
    assert both({(1, 2): 3}, 0, 3) == []
    assert both({(1, 2): 3}, -5, 3) == []


@needs_native
def test_counts_beyond_32_bits_stay_exact():
    big = 2**40 + 7
    merges = both({(1, 2, 1, 2): big, (2, 1): 3 * 2**33}, None, 3)
    assert merges[0] == (1, 2, 2 * big)  # above 2**41: no 32-bit count could hold it


@needs_native
def test_counts_beyond_63_bits_are_refused():
    with pytest.raises(OverflowError, match="2\\*\\*63"):
        fast_merges({(1, 2): 2**63}, None, 3)
    with pytest.raises(OverflowError, match="2\\*\\*63"):  # each fits, the sum does not
        fast_merges({(1, 2): 2**62, (2, 1): 2**62}, None, 3)


@needs_native
def test_same_argument_errors_as_reference():
    for trainer_merges in (fast_merges, heap_train, reference.train):
        with pytest.raises(ValueError, match="flags gives 2 entries for 3"):
            trainer_merges({(1, 2): 1}, None, 3, flags=[1, 1])
        with pytest.raises(ValueError, match="min_frequency"):
            trainer_merges({(1, 2): 1}, None, 3, min_frequency=0)
        with pytest.raises(FunctionalBPEError, match="merge_policy"):
            trainer_merges({(1, 2): 1}, None, 3, merge_policy="loose")
    with pytest.raises(ValueError, match="symbol id 7"):
        fast_merges({(1, 7): 1}, None, 3)
    with pytest.raises(ValueError, match="symbol id -1"):
        fast_merges({(1, -1): 1}, None, 3)


@needs_native
def test_flat_form_is_checked():
    data, offsets, counts = flat({"ab": 1, "cd": 2})

    def fast_table(*table):
        return face.learn_merges(PieceTable(*table), Alphabet(), None, backend="fast")

    with pytest.raises(ValueError, match="3 offsets"):
        fast_table(data, offsets[:2], counts)
    with pytest.raises(ValueError, match="not a range"):
        fast_table(data, array("q", [0, 2, 9]), counts)
    with pytest.raises(TypeError, match="int64"):
        fast_table(data, array("i", [0, 2, 4]), counts)
    with pytest.raises(ValueError, match="piece 1 is not valid UTF-8: byte 2"):
        fast_table(b"ab\xe9x", array("q", [0, 2, 4]), counts)


@needs_native
def test_progress_reports_merges_and_best_count(tiny_slices):
    calls = []
    merges = fast_merges({tuple(b"abcabcabd"): 5}, 4, 256, progress=lambda *call: calls.append(call))
    assert calls[-1] == ("merging", len(merges), 4, "done")
    done = [c[1] for c in calls[:-1]]
    assert done == sorted(done) and done[-1] == len(merges)
    assert calls[-2][3] == f"best count {merges[-1][2]}"


# -- Ctrl-C and errors free every C block ---------------------------------------------------


@functools.lru_cache(maxsize=None)
def long_corpus():
    """Pieces that keep the trainer busy for a while (tens of thousands of merges)."""
    import random

    rng = random.Random(0)
    return {tuple(rng.randrange(64) for _ in range(30)): rng.randint(1, 9) for _ in range(20000)}


@needs_native
def test_interrupt_from_progress_frees_everything(tiny_slices):
    before = trainer.live_blocks()

    def interrupt(stage, done, total, info):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fast_merges(long_corpus(), None, 64, progress=interrupt)
    assert trainer.live_blocks() == before


@needs_native
def test_sigint_during_the_merge_loop_stops_cleanly(monkeypatch):
    """A real SIGINT, sent from another thread while the loop runs without the GIL."""
    monkeypatch.setattr(trainer, "slice_seconds", 0.01)
    running = threading.Event()

    def kill_when_running():
        running.wait(60)
        time.sleep(0.05)  # let the main thread get back into the C loop
        os.kill(os.getpid(), signal.SIGINT)

    killer = threading.Thread(target=kill_when_running)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    before = trainer.live_blocks()
    seen = []

    def on_progress(stage, done, total, info):
        seen.append(done)
        running.set()

    try:
        killer.start()
        # Untouched, this corpus takes seconds: far longer than the signal needs.
        with pytest.raises(KeyboardInterrupt):
            fast_merges(long_corpus(), None, 64, progress=on_progress)
    finally:
        running.set()
        killer.join()
        signal.signal(signal.SIGINT, previous)
    assert seen and seen[-1] > 0  # stopped mid-training
    assert trainer.live_blocks() == before


@needs_native
def test_errors_free_everything():
    before = trainer.live_blocks()
    with pytest.raises(ValueError):
        fast_merges({(1, 2): 1, (1, 9): 1}, None, 3)
    with pytest.raises(OverflowError):
        fast_merges({(1, 2): 2**62, (2, 1): 2**62}, None, 3)
    fast_merges(long_corpus(), 200, 64)
    assert trainer.live_blocks() == before


@needs_native
def test_interrupted_cli_training_leaves_no_file(tmp_path, monkeypatch):
    """Ctrl-C while merging: exit code 130, and nothing new in the output folder."""
    import random

    from functionalbpe import cli
    from functionalbpe.cli.common import EXIT_INTERRUPTED
    from functionalbpe.util.progress import Progress

    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefgh") for _ in range(rng.randint(1, 9))) for _ in range(5000)]
    (tmp_path / "corpus.txt").write_text(" ".join(words), encoding="utf-8")
    update = Progress.update

    def interrupt_while_merging(self, done, info="", force=False):
        if self.stage == "merging" and done > 0:
            raise KeyboardInterrupt
        return update(self, done, info, force)

    monkeypatch.setattr(Progress, "update", interrupt_while_merging)
    monkeypatch.setattr(trainer, "slice_seconds", 0.0)
    out = tmp_path / "tok.json"
    argv = ["train", str(tmp_path / "corpus.txt"), "--vocab-size", "3000", "--out", str(out)]
    assert cli.main(argv) == EXIT_INTERRUPTED
    assert [p.name for p in tmp_path.iterdir()] == ["corpus.txt"]


# -- real text ------------------------------------------------------------------------------


@needs_native
def test_equals_the_heap_trainer_on_english_at_4000(corpora):
    text = read_corpus(corpora / "nl" / "en.txt", limit=3_000_000)
    counts = count_pieces(text, "gpt4")
    alphabet = Alphabet()
    symbols = {alphabet.symbols(p): c for p, c in counts.items()}
    expected = heap_train(symbols, 4000, 256)
    assert len(expected) == 4000
    assert face.learn_merges(PieceTable.from_dict(counts), alphabet, 4000, backend="fast") == expected
    assert fast_merges(symbols, 4000, 256) == expected


@needs_native
@pytest.mark.slow
@pytest.mark.parametrize("name", ["code/python.txt", "nl/ja.txt", "nl/ru.txt", "nl/de.txt"])
def test_equals_the_heap_trainer_on_more_corpora(corpora, name):
    counts = count_pieces(read_corpus(corpora / name), "gpt4")
    symbols = {Alphabet().symbols(p): c for p, c in counts.items()}
    fast = face.learn_merges(PieceTable.from_dict(counts), Alphabet(), 6000, backend="fast")
    assert fast == heap_train(symbols, 6000, 256)


@needs_native
@pytest.mark.slow
def test_equals_rustbpe_on_the_standard_library_at_32768():
    rustbpe = pytest.importorskip("rustbpe")
    from functionalbpe.text.patterns import PATTERNS

    from functionalbpe.cli.stdlib import stdlib_sources
    from functionalbpe.text.corpus import files

    docs = list(files(*stdlib_sources(), errors="replace"))
    assert sum(map(len, docs)) > 10_000_000
    theirs = rustbpe.Tokenizer()
    theirs.train_from_iterator(iter(docs), vocab_size=32768, pattern=PATTERNS["gpt4"])
    merges = face.learn_merges(PieceTable.from_dict(count_pieces(docs, "gpt4")), Alphabet(), 32768 - 256, backend="fast")
    ours = Alphabet(merges=[(a, b) for a, b, _ in merges]).all_token_bytes()
    ranks = sorted(theirs.get_mergeable_ranks(), key=lambda pair: pair[1])
    assert len(ranks) == len(ours) == 32768
    for token, rank in ranks:
        assert ours[rank] == token, f"id {rank}: rustbpe {token!r}, ours {ours[rank]!r}"

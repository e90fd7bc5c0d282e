"""The report's measures of length, information, numbers, code, integrity and fairness.

Each is checked against a hand-worked text and against a direct implementation of its
definition here, token by token in plain Python (the report computes them with numpy, a unit
at a time); the property tests do so on random text, cut into random units.
"""
import io
import keyword
import math
import re
import tokenize
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.measure import metrics
from functionalbpe.peers.face import ReportTokenizer
from functionalbpe.measure.fairness import gini, lorenz
from functionalbpe.measure.tables import tables
from functionalbpe.measure.tally import COMPOUND_OPERATORS, OPERATOR
from functionalbpe.schemes.registry import make_scheme

PATTERN = "gpt2"


def trained(text, size=300, scheme="plain"):
    pattern = PATTERN if scheme == "plain" else None
    return fb.train([text], vocab_size=size, pattern=pattern, scheme=scheme, progress=False)


def row_of(report, corpus, tokenizer):
    return next(r for r in report.results() if r["corpus"] == corpus and r["tokenizer"] == tokenizer)


# -- direct implementations of the definitions ---------------------------------------------------


def spans(tok, doc):
    """Byte spans of the tokens of ``doc``: ours with the plain scheme spell the text's bytes."""
    out, at = [], 0
    for i in tok.encode_ordinary(doc):
        n = len(tok.token_bytes(i))
        out.append((at, at + n))
        at += n
    assert at == len(doc.encode())
    return out


def cuts_of(tok, doc):
    return {s for s, _ in spans(tok, doc)} | {len(doc.encode())}


def renyi_direct(ids, alpha, vocab):
    n = Counter(ids)
    p = [c / len(ids) for c in n.values()]
    h = -sum(x * math.log2(x) for x in p) if alpha == 1 else math.log2(sum(x ** alpha for x in p)) / (1 - alpha)
    return h / math.log2(vocab)


def rank_direct(ids):
    order = [t for t, _ in sorted(Counter(ids).items(), key=lambda kv: -kv[1])]
    rank = {t: r for r, t in enumerate(order, start=1)}
    return sum(rank[t] for t in ids) / len(ids)


def successors_direct(docs_ids, n, min_count=3):
    follow = defaultdict(Counter)
    for ids in docs_ids:
        for i in range(len(ids) - n + 1):
            follow[tuple(ids[i:i + n - 1])][ids[i + n - 1]] += 1
    total = sum(sum(c.values()) for c in follow.values())
    h_all, eta, weight = 0.0, 0.0, 0
    for succ in follow.values():
        m = sum(succ.values())
        h = -sum(c / m * math.log2(c / m) for c in succ.values())
        h_all += m / total * h
        if m >= min_count:
            eta += m * (h / math.log2(len(succ)) if len(succ) > 1 else 0.0)
            weight += m
    return (eta / weight if weight else None), (h_all if total else None)


def numbers_direct(tok, docs):
    f1, patterns, tokens = [], Counter(), defaultdict(list)
    for doc in docs:
        cuts = cuts_of(tok, doc)
        for m in re.finditer(rb"[0-9]+", doc.encode()):
            s, e = m.span()
            inner = sorted(c - s for c in cuts if s < c < e)
            f1.append(metrics.digit_group_f1(e - s, inner))
            patterns[e - s, tuple(inner)] += 1
            tokens[min(e - s, 10)].append(len(inner) + 1)
    return f1, patterns, {d: sum(v) / len(v) for d, v in tokens.items()}


def operators_direct(tok, doc):
    data = doc.encode()
    toks = spans(tok, doc)
    isolated = kept = compounds = 0
    found = [(len(doc[:m.start()].encode()), len(doc[:m.end()].encode())) for m in OPERATOR.finditer(doc)]
    for s, e in found:
        covering = [(a, b) for a, b in toks if a < e and b > s]
        around = data[covering[0][0]:s] + data[e:covering[-1][1]]
        isolated += not around.strip()
        if e - s > 1:
            compounds += 1
            kept += len(covering) == 1
    return len(found), isolated, compounds, kept


def python_direct(tok, doc):
    cuts = cuts_of(tok, doc)
    lines = doc.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    leaves = aligned = idents = split = ident_tokens = 0
    data = doc.encode()
    for t in tokenize.generate_tokens(io.StringIO(doc).readline):
        if t.type not in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING, tokenize.OP):
            continue
        s = len(doc[:starts[t.start[0] - 1] + t.start[1]].encode())
        e = len(doc[:starts[t.end[0] - 1] + t.end[1]].encode())
        leaves += 1
        start_ok = s in cuts or (s - 1 in cuts and data[s - 1:s] == b" ")
        aligned += start_ok and e in cuts
        if t.type == tokenize.NAME and not (keyword.iskeyword(t.string) or keyword.issoftkeyword(t.string)):
            inner = sum(1 for c in cuts if s < c < e)
            idents += 1
            split += inner > 0
            ident_tokens += inner + 1
    return leaves, aligned, idents, split, ident_tokens


def indents_direct(tok, doc):
    toks = spans(tok, doc)
    data = doc.encode()
    found = [(len(doc[:m.start()].encode()), m.end() - m.start())
             for m in re.finditer(r"(?m)^[ \t]+(?=[^ \t\r\n])", doc)]
    unit = math.gcd(*[w for _, w in found]) if found else 1
    pairs = Counter()
    for s, w in found:
        blank = sum(1 for a, b in toks if a < s + w and b > s and not data[a:b].strip())
        pairs[w // unit, blank] += 1
    return pairs


def utf8_direct(tok, docs):
    complete = crossing = cuts_in = cuts_all = wide = split = count = 0
    for doc in docs:
        data = doc.encode()
        starts = {len(doc[:i].encode()) for i in range(len(doc) + 1)}
        toks = spans(tok, doc)
        count += len(toks)
        for a, b in toks:
            whole = a in starts and b in starts
            complete += whole
            crossing += (not whole) and any(a < c < b for c in starts)
            if b < len(data):
                cuts_all += 1
                cuts_in += b not in starts
        cuts = {a for a, _ in toks}
        at = 0
        for ch in doc:
            n = len(ch.encode())
            if n > 1:
                wide += 1
                split += any(at < c < at + n for c in cuts)
            at += n
    return complete, crossing, cuts_in, cuts_all, wide, split, count


def spearman_direct(pairs):
    xs = [x for (x, _), n in pairs.items() for _ in range(n)]
    ys = [y for (_, y), n in pairs.items() for _ in range(n)]

    def ranks(v):
        order = sorted(v)
        return [order.index(a) + (order.count(a) + 1) / 2 for a in v]

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))


def levenshtein_direct(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def whitespace_kept_direct(a, b):
    """Every longest common subsequence, by brute-force DP over (length, whitespace) pairs."""
    best = [[(0, 0)] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            options = [best[i - 1][j], best[i][j - 1]]
            if a[i - 1] == b[j - 1]:
                m, w = best[i - 1][j - 1]
                options.append((m + 1, w + a[i - 1].isspace()))
            best[i][j] = max(options)
    return best[-1][-1][1]


# -- length and information -------------------------------------------------------------------------

TEXT = "ab ab ab cd cd cd cd cd é x"  # the hand-worked text of tests/measure/test_report.py: 23 tokens


def hand_tokenizer():
    return fb.Tokenizer(make_scheme("plain", PATTERN), [(97, 98), (32, 256)])


def test_lines_documents_and_per_document_ratios_by_hand():
    tok = hand_tokenizer()
    docs = [TEXT, "ab\nab\n", "", " x"]  # 23, 4, 0 and 2 tokens; 10, 2, 0 and 1 words
    r = fb.report({"bpe": tok}, {"d": docs}, progress=False)
    row = row_of(r, "d", "bpe")
    assert row["documents"] == 4 and row["zero_token_documents"] == 1
    assert row["lines"] == 1 + 2 + 0 + 1
    assert row["tokens_per_line"] == 29 / 4 and row["lines_per_token"] == 4 / 29
    # The mean of per-document ratios, over the documents with tokens (and words).
    assert row["fertility_mean"] == pytest.approx((23 / 10 + 4 / 2 + 2 / 1) / 3, abs=1e-15)
    assert row["fertility"] == 29 / 13  # the ratio of totals
    assert row["mean_token_bytes"] == pytest.approx((28 / 23 + 6 / 4 + 2 / 2) / 3, abs=1e-15)
    assert row["mean_token_chars"] == pytest.approx((27 / 23 + 6 / 4 + 2 / 2) / 3, abs=1e-15)
    ids = [i for d in docs for i in tok.encode_ordinary(d)]
    assert row["vocab_utilization"] == len(set(ids)) / 258
    assert row["type_token_ratio"] == len(set(ids)) / len(ids)


def test_information_measures_equal_their_definitions():
    tok = hand_tokenizer()
    docs = [TEXT, "cd cd ab x x x", "ab"]
    r = fb.report({"bpe": tok}, {"d": docs}, progress=False)
    row = row_of(r, "d", "bpe")
    per_doc = [tok.encode_ordinary(d) for d in docs]
    ids = [i for d in per_doc for i in d]
    for alpha, key in ((1, "renyi_efficiency_1"), (2, "renyi_efficiency_2"), (2.5, "renyi_efficiency_2_5"),
                       (3, "renyi_efficiency_3")):
        assert row[key] == pytest.approx(renyi_direct(ids, alpha, 258), rel=1e-12)
    assert row["average_token_rank"] == pytest.approx(rank_direct(ids), rel=1e-12)
    eta2, h2 = successors_direct(per_doc, 2)
    eta3, h3 = successors_direct(per_doc, 3)
    assert row["bigram_successor_efficiency"] == pytest.approx(eta2, rel=1e-12)
    assert row["bigram_conditional_entropy_bits"] == pytest.approx(h2, rel=1e-12)
    assert row["trigram_successor_efficiency"] == pytest.approx(eta3, rel=1e-12)
    assert row["trigram_conditional_entropy_bits"] == pytest.approx(h3, rel=1e-12)


def test_successor_entropy_by_hand():
    # "a b a b a c": after a: b, b, c (3 times: H = 0.918…, k = 2); after b: a, a (H = 0).
    eta, h = metrics.successor_entropy([0, 0, 1], [2, 1, 2])
    h_a = -(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3))
    assert h == pytest.approx(3 / 5 * h_a, abs=1e-15)
    assert eta == pytest.approx(h_a / 1.0, abs=1e-15)  # only "a" is seen 3 times; log2(2) = 1


def test_renyi_efficiency_agrees_with_tokenization_scorer():
    pytest.importorskip("tokenization_scorer")  # in the test extra
    from tokenization_scorer.metrics import get_metric

    tok = trained("the cat sat on the mat, the dog sat on the log. " * 5, size=280)
    text = "the cat and the dog sat on the mat and on the log"
    r = fb.report({"bpe": tok}, {"t": text}, progress=False)
    row = row_of(r, "t", "bpe")
    words = [[str(i) for i in tok.encode_ordinary(text)]]
    for alpha, key in ((1.0, "renyi_efficiency_1"), (2.0, "renyi_efficiency_2"), (2.5, "renyi_efficiency_2_5"),
                       (3.0, "renyi_efficiency_3")):
        theirs = get_metric("renyi_efficiency")(list(words), power=alpha, vocab=tok.vocab_size)
        assert row[key] == pytest.approx(float(theirs), rel=1e-12)


# -- numbers -------------------------------------------------------------------------------------


def test_digit_groups_by_hand():
    # Single digits only (no merges): every digit is a token, so 1234567 is cut after every digit:
    # placed {1..6}, ideal {1, 4}: F1 = 2·2 / (6 + 2) = 0.5. "42": placed {1}, ideal {}: 0.
    tok = fb.Tokenizer(make_scheme("plain", PATTERN), [])
    r = fb.report({"bytes": tok}, {"t": "x 1234567 y 42 z 7"}, progress=False)
    row = row_of(r, "t", "bytes")
    assert row["numbers"] == 3
    assert row["digit_group_f1"] == pytest.approx((0.5 + 0.0 + 1.0) / 3, abs=1e-15)
    assert row["tokens_per_number"] == {"1": 1.0, "2": 2.0, "7": 7.0}
    assert row["digit_split_entropy"] == {"1": 0.0, "2": 0.0, "7": 0.0}


def test_numbers_equal_their_definitions_on_a_trained_tokenizer():
    text = "in 1999 and 2024 there were 12,345 and 1234567 of 42 or 420 and 31 and 3141592653 x"
    tok = trained(text * 3, size=290)
    docs = [text, "7 77 777 7777 77777 1000000 12 345"]
    r = fb.report({"bpe": tok}, {"d": docs}, progress=False)
    row = row_of(r, "d", "bpe")
    f1, patterns, tokens = numbers_direct(tok, docs)
    assert row["numbers"] == len(f1)
    assert row["digit_group_f1"] == pytest.approx(sum(f1) / len(f1), rel=1e-12)
    assert row["tokens_per_number"] == {str(d): v for d, v in sorted(tokens.items())}
    by_len = defaultdict(Counter)
    for (d, p), n in patterns.items():
        by_len[d][p] += n
    assert row["digit_split_entropy"] == pytest.approx(
        {str(d): metrics.entropy_bits(c.values()) for d, c in sorted(by_len.items())}, abs=1e-12)


# -- code ------------------------------------------------------------------------------------------

PYTHON = '''def total(items, start=0):
    acc = start
    for item in items:
        if item >= 0 and item != 10:
            acc += item ** 2
        else:
            acc -= 1
    return acc == start  # done
'''


def test_operators_by_hand():
    # Bytes only: every operator byte is a token, so single operators are isolated unless a
    # token holds something else: none does. Compounds (>=, !=, +=, **, -=, ==) are all cut.
    tok = fb.Tokenizer(make_scheme("plain", PATTERN), [])
    r = fb.report({"bytes": tok}, {"python": PYTHON}, progress=False)
    row = row_of(r, "python", "bytes")
    found = [m.group() for m in OPERATOR.finditer(PYTHON)]
    assert found == ["=", "=", ">=", "!=", "+=", "**", "-=", "=="]
    assert row["operators"] == 8 and row["operator_isolation"] == 1.0
    assert row["compound_operators"] == 6 and row["compound_preservation"] == 0.0
    assert set(COMPOUND_OPERATORS) >= {"==", "+=", "->", "::"}


def test_code_measures_equal_their_definitions():
    tok = trained(PYTHON * 4 + "x = a+b; y = a->b; z = a::b\n", size=330)
    r = fb.report({"bpe": tok}, {"python": PYTHON, "c": "int x = a+b; y += *p->q; z = a::b == c;\n"},
                  progress=False)
    for corpus, doc in (("python", PYTHON), ("c", "int x = a+b; y += *p->q; z = a::b == c;\n")):
        row = row_of(r, corpus, "bpe")
        ops, isolated, compounds, kept = operators_direct(tok, doc)
        assert (row["operators"], row["compound_operators"]) == (ops, compounds)
        assert row["operator_isolation"] == isolated / ops
        assert row["compound_preservation"] == kept / compounds
    row = row_of(r, "python", "bpe")
    leaves, aligned, idents, split, ident_tokens = python_direct(tok, PYTHON)
    assert row["python_leaves"] == leaves and row["python_leaf_alignment"] == aligned / leaves
    assert row["identifiers"] == idents and row["identifier_fragmentation"] == split / idents
    assert row["tokens_per_identifier"] == ident_tokens / idents
    pairs = indents_direct(tok, PYTHON)
    if len({y for _, y in pairs}) > 1:
        assert row["indent_depth_correlation"] == pytest.approx(spearman_direct(pairs), abs=1e-12)
    else:  # every indent costs the same: no rank correlation
        assert row["indent_depth_correlation"] is None
    assert row_of(r, "c", "bpe")["python_leaves"] == 0  # C is code, not Python


def test_indentation_by_hand():
    # Bytes only: an indent of w spaces is w tokens; depths 1, 2, 3 → 4, 8, 12 tokens: ρ = 1.
    tok = fb.Tokenizer(make_scheme("plain", PATTERN), [])
    doc = "if a:\n    if b:\n        if c:\n            x\n"
    r = fb.report({"bytes": tok}, {"py": doc}, progress=False)
    row = row_of(r, "py", "bytes")
    assert row["indent_tokens_by_depth"] == {"1": 4.0, "2": 8.0, "3": 12.0}
    assert row["indent_depth_correlation"] == pytest.approx(1.0, abs=1e-15)


@given(st.dictionaries(st.tuples(st.integers(0, 4), st.integers(0, 4)), st.integers(1, 3), min_size=1, max_size=8))
def test_spearman_equals_ranks_worked_out_one_by_one(pairs):
    xs = {x for x, _ in pairs}
    ys = {y for _, y in pairs}
    if len(xs) < 2 or len(ys) < 2:
        assert metrics.spearman(pairs) is None
    else:
        assert metrics.spearman(pairs) == pytest.approx(spearman_direct(pairs), abs=1e-12)


# -- integrity -------------------------------------------------------------------------------------


class Lossy(ReportTokenizer):
    """A tokenizer that loses what it cannot spell: one id per ASCII character, 0 otherwise."""

    kind = "lossy"

    def __init__(self):
        pass

    @property
    def vocab_size(self):
        return 128

    def encode(self, text):
        return [ord(c) if ord(c) < 128 and c != "\t" else 0 for c in text]

    def decode(self, ids):
        return "".join("?" if i == 0 else chr(i) for i in ids)

    def can_decode(self):
        return True

    def byte_tokens(self):
        return {}

    def surfaces(self):
        return {}


def test_round_trip_by_hand():
    docs = ["hello", "a b\tc", "héllo wörld"]
    r = fb.report({"lossy": Lossy(), "ours": hand_tokenizer()}, {"d": docs}, progress=False)
    row = row_of(r, "d", "lossy")
    assert row["round_trip_exact_rate"] == 1 / 3
    # "a b\tc" → "a b?c": one substitution in 5; "héllo wörld" → two in 11.
    assert row["char_error_rate"] == pytest.approx((0 + 1 / 5 + 2 / 11) / 3, abs=1e-15)
    # Whitespace: 0 + 2 + 1 characters, the tab lost.
    assert row["whitespace_fidelity"] == 2 / 3
    ours = row_of(r, "d", "ours")
    assert (ours["round_trip_exact_rate"], ours["char_error_rate"], ours["whitespace_fidelity"]) == (1.0, 0.0, 1.0)


@settings(max_examples=60, deadline=None)
@given(st.text("ab \t\né", max_size=12), st.text("ab \t\né", max_size=12))
def test_edit_distance_and_whitespace_kept_equal_direct_dynamic_programming(a, b):
    assert metrics.edit_distance(a, b) == levenshtein_direct(a, b)
    assert metrics.whitespace_kept(a, b) == whitespace_kept_direct(a, b)


def test_utf8_integrity_by_hand():
    # Bytes only: "é" is two tokens (a boundary inside it), "你" three; "ab" two whole tokens.
    tok = fb.Tokenizer(make_scheme("plain", PATTERN), [])
    r = fb.report({"bytes": tok}, {"t": "ab é你"}, progress=False)
    row = row_of(r, "t", "bytes")
    # 8 tokens: a b ␣ C3 A9 E4 BD A0; whole: a b ␣; no token spans two characters.
    assert row["aligned_tokens"] == 8
    assert row["complete_utf8_share"] == 3 / 8 and row["crossing_token_share"] == 0.0
    # 7 inner boundaries, 3 inside a character (C3|A9, E4|BD, BD|A0); both wide characters split.
    assert row["boundary_in_char_rate"] == 3 / 7 and row["split_char_rate"] == 1.0


def test_a_token_across_two_characters_is_crossing():
    # A merge of é's last byte with 你's first: C3 | A9 E4 | BD A0 (tokens 256 and 257).
    tok = fb.Tokenizer(make_scheme("plain", r"[\s\S]+"), [(0xA9, 0xE4), (0xBD, 0xA0)])
    r = fb.report({"x": tok}, {"t": "é你"}, progress=False)
    row = row_of(r, "t", "x")
    assert row["crossing_token_share"] == 1 / 3 and row["complete_utf8_share"] == 0.0
    assert row["split_char_rate"] == 1.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text("ab 12é你\n\t+=-><:", max_size=30), min_size=1, max_size=4), st.integers(5, 40))
def test_boundary_measures_equal_their_definitions_on_random_text_in_chunks(docs, unit_chars):
    tok = trained("ab ab 12 é你 a+=b a->b 123 1234 ab\n\t" * 3, size=290)
    docs = docs + ["x"]  # a corpus holds some text
    r = fb.report({"bpe": tok}, {"d": docs}, progress=False, unit_chars=unit_chars)
    row = row_of(r, "d", "bpe")
    complete, crossing, cuts_in, cuts_all, wide, split, count = utf8_direct(tok, docs)
    assert row["lines"] == sum(metrics.count_lines(d) for d in docs) and row["documents"] == len(docs)
    assert row["boundary_in_char_rate"] == metrics.share(cuts_in, cuts_all)
    assert row["aligned_tokens"] == count
    assert row["complete_utf8_share"] == metrics.share(complete, count)
    assert row["crossing_token_share"] == metrics.share(crossing, count)
    assert row["split_char_rate"] == metrics.share(split, wide)
    f1, _, tokens = numbers_direct(tok, docs)
    assert row["numbers"] == len(f1)
    if f1:
        assert row["digit_group_f1"] == pytest.approx(sum(f1) / len(f1), rel=1e-12)
    per_doc = [tok.encode_ordinary(d) for d in docs]
    eta2, h2 = successors_direct(per_doc, 2)
    assert row["bigram_conditional_entropy_bits"] == (pytest.approx(h2, rel=1e-9, abs=1e-12) if h2 is not None else None)
    eta3, h3 = successors_direct(per_doc, 3)
    assert row["trigram_conditional_entropy_bits"] == (pytest.approx(h3, rel=1e-9, abs=1e-12) if h3 is not None else None)
    assert row["trigram_successor_efficiency"] == (pytest.approx(eta3, rel=1e-9, abs=1e-12) if eta3 is not None else None)
    assert row["round_trip_exact_rate"] == 1.0


# -- instructions and markers, fairness -------------------------------------------------------------


def test_marker_tokens_are_the_atoms_of_the_scheme():
    text = "The Cat sat. THE DOG ran, the cat sat."
    tok = trained(text * 3, size=300, scheme="markers")
    r = fb.report({"m": tok}, {"t": text}, progress=False)
    row = row_of(r, "t", "m")
    alphabet = tok.alphabet
    atoms = set(range(alphabet.first_merge - len(alphabet.atoms), alphabet.first_merge))
    ids = tok.encode_ordinary(text)
    n = sum(1 for i in ids if i in atoms)
    assert n > 0 and row["marker_tokens"] == n and row["marker_share"] == n / len(ids)
    assert row["fertility_without_markers"] == (len(ids) - n) / 9
    assert any(t.title == "Instructions and markers" for t in tables(r))


def test_fairness_across_corpora():
    tok = hand_tokenizer()
    corpora = {"en": "ab ab ab", "de": "cd cd cd cd", "fr": "é é"}
    r = fb.report({"bpe": tok}, corpora, progress=False)
    row = r.tokenizer_rows()[0]
    counts = {c: len(tok.encode_ordinary(t)) for c, t in corpora.items()}
    assert row["gini_tokens"] == pytest.approx(gini(counts.values()), abs=1e-15)
    assert row["gini_tokens_per_byte"] == pytest.approx(
        gini(counts[c] / len(t.encode()) for c, t in corpora.items()), abs=1e-15)
    assert row["gini_tokens_per_line"] == pytest.approx(gini(counts.values()), abs=1e-15)  # one line each
    assert row["lorenz_curve"] == [list(p) for p in lorenz(counts.values())]
    assert row["reference_corpus"] == "en"
    assert row["token_premium"] == {c: counts[c] / counts["en"] for c in r.corpus_order()}
    assert row["max_token_premium"] == max(counts.values()) / counts["en"]
    used = [len(set(tok.encode_ordinary(t))) / 258 for t in corpora.values()]
    assert row["utilization_cv"] == pytest.approx(metrics.coefficient_of_variation(used), rel=1e-12)
    assert any(t.title == "Across corpora" for t in tables(r))
    one = fb.report({"bpe": tok}, {"en": "ab"}, progress=False).tokenizer_rows()[0]
    assert one["gini_tokens"] is None and one["token_premium"] is None


def test_totals_add_up_the_corpora():
    tok = hand_tokenizer()
    r = fb.report({"bpe": tok}, {"a": ["ab 12", "x"], "b": "1234 cd"}, progress=False)
    total = r.totals()[0]
    rows = [row_of(r, c, "bpe") for c in ("a", "b")]
    assert total["documents"] == 3 and total["numbers"] == sum(x["numbers"] for x in rows)
    per_doc = [tok.encode_ordinary(d) for d in ("ab 12", "x", "1234 cd")]
    assert total["bigram_conditional_entropy_bits"] == pytest.approx(successors_direct(per_doc, 2)[1], rel=1e-12)


# -- the outputs -----------------------------------------------------------------------------------


def test_the_example_sentence_is_cut_into_each_tokenizers_tokens():
    tok = hand_tokenizer()
    byte = fb.Tokenizer(make_scheme("plain", PATTERN), [])
    r = fb.report({"bpe": tok, "bytes": byte}, {"t": "  \n" + TEXT + "\nsecond line"}, progress=False)
    example = r.to_dict()["example"]
    assert example["text"] == TEXT  # the first line that holds a word
    assert example["tokens"]["bpe"] == [tok.decode([i]) if i < 0x80 or i > 255 else "\ufffd"
                                        for i in tok.encode_ordinary(TEXT)]
    assert "".join(example["tokens"]["bytes"]).count("\ufffd") == 2  # é as two bytes
    assert "".join(example["tokens"]["bpe"]).replace("\ufffd\ufffd", "é") == TEXT
    from functionalbpe.measure.html import example_html

    page = "".join(example_html(r))
    # Every other token shaded: 12 of bpe's 23 tokens, 14 of the 28 bytes.
    assert "An example, token by token" in page and page.count('<span class="a">') == 12 + 14
    chosen = fb.report({"bpe": tok}, {"t": TEXT}, example="ab cd", progress=False)
    assert chosen.example() == {"text": "ab cd", "tokens": {"bpe": ["ab", " ", "c", "d"]}}


def test_the_html_plots_the_families_and_uses_a_log_scale_where_one_bar_dwarfs_the_others():
    pytest.importorskip("matplotlib")
    from functionalbpe.measure import html

    tok = trained(PYTHON * 3 + " 1234 12 7 " * 3, size=300)
    corpora = {"en": "ab cd 1234 12", "zh": "你好世界你好世界你好世界你好世界你好世界你好世界", "python": PYTHON}
    r = fb.report({"bpe": tok}, corpora, progress=False)
    captions = [c for c, _, _ in html.plots(r)]
    assert "Lorenz curve of tokens across corpora" in captions
    assert "Numbers: tokens and splits by length" in captions
    assert "Indentation: tokens by depth" in captions

    from matplotlib.figure import Figure

    class Axis:
        scale = None
        xaxis = Figure().subplots().xaxis

        def set_xscale(self, scale):
            self.scale = scale

    flat, steep = Axis(), Axis()
    assert not html._log_scale_if_needed(flat, [1.0, 2.0, 9.9])
    assert html._log_scale_if_needed(steep, [1.0, 2.0, 10.0, None]) and steep.scale == "log"


def test_an_id_beyond_the_vocabulary_is_one_clear_error():
    class Wrong(Lossy):
        def encode(self, text):
            return [500]

    with pytest.raises(fb.FunctionalBPEError, match="outside its vocabulary of 128 ids"):
        fb.report({"wrong": Wrong()}, {"t": "x"}, progress=False)


def test_every_measure_is_defined_in_the_docs():
    from pathlib import Path

    from functionalbpe.measure.measures import RESULT_MEASURES, VOCABULARY_MEASURES

    page = (Path(__file__).resolve().parent.parent.parent / "docs" / "metrics.md").read_text(encoding="utf-8")
    keys = [m.key for m in RESULT_MEASURES + VOCABULARY_MEASURES]
    missing = [k for k in keys if f"`{k}`" not in page and f"`{k}`," not in page]
    # Rényi's keys are listed together as `renyi_efficiency_1`, `_2`, `_2_5`, `_3`.
    missing = [k for k in missing if not (k.startswith("renyi_efficiency_") and "`renyi_efficiency_1`" in page)]
    assert missing == []


def test_a_token_with_a_shift_code_is_a_case_variant_of_its_twin():
    from functionalbpe.measure.metrics import case_key, families

    assert families({1: "¦the¦", 2: "↑¦the¦", 3: "⇑¦the¦", 4: "¦cat¦"}, case_key) == [[1, 2, 3]]
    tok = fb.train(["The cat. the cat. THE CAT. The end, the end."] * 20, vocab_size=None, scheme="markers",
                   case=True, progress=False)
    surfaces = {i: tok.scheme.show(tok.token_bytes(i).decode("utf-8", "replace"))
                for i in range(tok.alphabet.first_merge, tok.alphabet.first_special)}
    shifted = [s for s in surfaces.values() if s.startswith("↑") and s[1:] in surfaces.values()]
    assert shifted  # the trainer merged a shift code into a word it also has unshifted
    r = fb.report({"m": tok}, {"t": "The cat and the end."}, progress=False)
    row = next(row for row in r.tokenizer_rows() if row["name"] == "m")
    assert row["case_families"] >= len(shifted)

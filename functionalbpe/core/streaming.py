"""Decoding ids as they arrive: streaming generation.

A model emits one token at a time, and a token may end in the middle of a character (the
first two bytes of an emoji) or, with a scheme, before the text of an atom is settled (a
case code before its word). :class:`StreamDecoder` returns, for every call, exactly the text
that can no longer change, and holds the rest back. Wherever the text is cut, what it returns
joins to ``tokenizer.decode(all ids)``; with ``errors="strict"`` it raises where ``decode``
would, naming the token.

Example::

    >>> import functionalbpe as fb
    >>> tok = fb.train(["héllo"], vocab_size=256, progress=False)
    >>> d = tok.stream_decoder()
    >>> [d.feed([i]) for i in tok.encode("hé!")] + [d.finish()]
    ['h', '', 'é', '!', '']
"""
from __future__ import annotations

import codecs
import operator
from bisect import bisect_right
from typing import TYPE_CHECKING, Iterable, List, Optional, Tuple, Union

from ..errors import DecodeError
from .decoding import Budget, output_budget

if TYPE_CHECKING:  # pragma: no cover
    from ..core.decoding import Decoding

# Text form held back (a scheme's atoms waiting for their base) is checked again at every id
# while it is at most this long; past it, each time it has doubled since the last check, so
# that a run of held atoms costs time linear in its length, not its square (a stream of
# 16,000 boundary-marker shift codes took 206 s). The text is the same; only how soon a long
# held run is released changes.
RESCAN_CHARS = 256


class StreamDecoder:
    """Incremental decoding for one stream of ids (make one with ``tok.stream_decoder()``).

    It takes the tokenizer's :class:`~functionalbpe.core.decoding.Decoding`, the kernel that
    ``decode`` uses, and applies its steps as the ids arrive. Not for use from several
    threads at once; make one decoder per stream.
    """

    def __init__(self, decoding: "Decoding", errors: str = "strict") -> None:
        codecs.lookup_error(errors)  # an unknown handler fails now, not at the first byte
        self._decoding = decoding
        self._errors = errors
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors)
        # Text form received but not yet decodable (schemes): pieces, joined when checked.
        self._pending: List[str] = []
        self._pending_chars = 0
        self._checked_chars = 0  # how long the held text was when it was last checked
        self._fed = 0  # ids received so far
        self._segment_ids = 0  # ids since the last special token (for the output budget)
        self._budget = Budget(output_budget(None, 0))
        # (end byte offset in this segment, stream position) of the tokens that the bytes
        # being decoded come from: the current run, and those the decoder holds back bytes
        # of (at most 3 bytes); enough to say which token a UTF-8 error is in.
        self._ends: List[Tuple[int, int]] = []
        self._segment_bytes = 0

    def feed(self, ids: Union[int, Iterable[int]], max_output: Optional[int] = None) -> str:
        """Take more ids; return the text that is now final (possibly empty). ``max_output``:
        the most characters this call may return (default: 256 per id fed since the last
        special token, at least 16,777,216; else a DecodeError, as for ``decode``)."""
        try:
            ids = [operator.index(ids)]  # type: ignore[arg-type]
        except TypeError:
            ids = list(ids)  # type: ignore[arg-type]
        kernel = self._decoding
        internal = kernel.internal(ids)
        self._segment_ids += len(internal)
        self._budget = Budget(output_budget(max_output, self._segment_ids))
        first_special = kernel.first_special
        out: List[str] = []
        run: List[int] = []
        for token in internal:
            if token < first_special:
                run.append(token)
                continue
            if run:
                out.append(self._text(run))
                run = []
            out.append(self._end_segment())
            out.append(kernel.specials[token - first_special])
            self._fed += 1
        if run:
            out.append(self._text(run))
        return "".join(out)

    def finish(self, max_output: Optional[int] = None) -> str:
        """The end of the stream: return what was held back (an incomplete character is
        an error with ``errors="strict"``, U+FFFD with ``"replace"``)."""
        self._budget = Budget(output_budget(max_output, self._segment_ids))
        return self._end_segment()

    def _text(self, run: List[int]) -> str:
        kernel = self._decoding
        data = kernel.joined_bytes(run, self._budget)
        table = kernel.alphabet.all_token_bytes()
        held_from = self._segment_bytes - 3
        self._ends = [e for e in self._ends if e[0] > held_from]
        for token in run:
            self._segment_bytes += len(table[token])
            self._ends.append((self._segment_bytes, self._fed))
            self._fed += 1
        text = self._utf8_decode(data, final=False)
        if not kernel.scheme.atoms:
            return text
        if not text:
            return ""
        self._pending.append(text)
        self._pending_chars += len(text)
        if self._pending_chars > RESCAN_CHARS and self._pending_chars < 2 * self._checked_chars:
            return ""  # a long held run: checked again once it has doubled
        pending = "".join(self._pending)
        cut = kernel.scheme.decodable_prefix(pending)
        ready, rest = pending[:cut], pending[cut:]
        self._pending = [rest] if rest else []
        self._pending_chars = self._checked_chars = len(rest)
        return kernel.scheme_text(ready, self._errors, self._budget) if ready else ""

    def _end_segment(self) -> str:
        """Text before a special token (or the end) is decoded as a whole, as decode() does."""
        text = "".join(self._pending) + self._utf8_decode(b"", final=True)
        self._pending = []
        self._pending_chars = self._checked_chars = 0
        self._segment_ids = 0
        self._utf8.reset()
        self._segment_bytes = 0
        self._ends.clear()
        if self._decoding.scheme.atoms and text:
            return self._decoding.scheme_text(text, self._errors, self._budget)
        return text

    def _utf8_decode(self, data: bytes, final: bool) -> str:
        held = len(self._utf8.getstate()[0])
        try:
            return self._utf8.decode(data, final)
        except UnicodeDecodeError as exc:
            # exc.start counts from the held-back bytes, which end where data starts.
            offset = self._segment_bytes - len(data) - held + exc.start
            ends = [end for end, _ in self._ends]
            position = self._ends[min(bisect_right(ends, offset), len(ends) - 1)][1]
            raise DecodeError(
                f"the ids do not decode to valid UTF-8: token {position} of the stream is cut "
                f"inside a character ({exc.reason}); pass errors='replace' to decode it as U+FFFD"
            ) from None

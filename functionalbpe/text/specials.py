"""The special-token policy: which special tokens a call allows, and where they cut a text.

tiktoken's rules: ``encode`` refuses text that holds a special token unless the token is
allowed (``allowed_special``) or explicitly left out of ``disallowed_special``; an allowed
token is one id and cuts the text around it, so no piece and no merge crosses it.

    >>> policy = SpecialPolicy({"<s>": 9})
    >>> allowed, disallowed = policy.sets("all", "all")
    >>> policy.segments("a<s>b", allowed)
    [('a', False), ('<s>', True), ('b', False)]
    >>> policy.refuse("a<s>", policy.sets(set(), "all")[1])
    Traceback (most recent call last):
    ...
    functionalbpe.errors.SpecialTokenError: the text contains the special token '<s>' at offset 1, which is disallowed; pass allowed_special={'<s>'} (or 'all') to encode it as the special token, or disallowed_special=() / encode_ordinary() to encode it as ordinary text
"""
from __future__ import annotations

from functools import partial
from typing import AbstractSet, Any, Callable, Collection, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from ..core.encoder import Refusal
from ..errors import FunctionalBPEError, SpecialTokenError, UnknownTokenError
from ..util.checks import special_set
from .patterns import special_cutter

SpecialSet = Union[str, AbstractSet[str], Collection[str]]
Segments = List[Tuple[str, bool]]


class SpecialPolicy:
    """The special tokens of one tokenizer (``{text: id}``) and the cutters over them."""

    def __init__(self, ids: Dict[str, int]) -> None:
        self.ids = ids
        # "All special tokens" is one object with its cutter kept here: finding the cutter by
        # an equal set would compare every token on each call (0.5 ms for 20,000 tokens).
        self.all: FrozenSet[str] = frozenset(ids)
        self._all_cutter: Any = None

    def id_of(self, text: str) -> int:
        """The id of a special token; :class:`UnknownTokenError` if it is not one here."""
        if text not in self.ids:
            raise UnknownTokenError(f"{text!r} is not a special token here (they are {sorted(self.ids)!r})")
        return self.ids[text]

    def sets(self, allowed_special: SpecialSet, disallowed_special: SpecialSet) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        """The allowed and the disallowed tokens of one call, by tiktoken's rules."""
        specials = self.all
        if allowed_special == "all":
            allowed = specials
        else:
            allowed = special_set(allowed_special, "allowed_special")
            unknown = allowed - specials
            if unknown:
                raise SpecialTokenError(
                    f"allowed_special names {sorted(unknown)!r}, which this tokenizer does not have; "
                    f"its special tokens are {sorted(specials)!r}"
                )
        if disallowed_special == "all":
            disallowed = specials - allowed if allowed else specials
        else:
            disallowed = special_set(disallowed_special, "disallowed_special")
        return allowed, disallowed

    def cutter(self, specials: FrozenSet[str]) -> Any:
        """What cuts ``specials`` out of text (:func:`~functionalbpe.text.patterns.special_cutter`)."""
        if specials is not self.all:
            return special_cutter(specials)
        if self._all_cutter is None:
            self._all_cutter = special_cutter(specials)
        return self._all_cutter

    def segments(self, text: str, allowed: FrozenSet[str]) -> Segments:
        """``text`` cut at the allowed tokens: ``(segment, is_special)`` in order."""
        return self.cutter(allowed).split(text) if allowed else [(text, False)]

    def refuse(self, text: str, disallowed: FrozenSet[str]) -> None:
        """A :class:`SpecialTokenError` naming the first disallowed token in ``text`` and
        how to allow it; its ``token`` and ``offset`` are kept for a caller that words the
        error its own way (the CLI)."""
        if not disallowed:
            return
        if len(disallowed) <= 8:  # str's own search first: no UTF-8 made, and most texts hold none
            for token in disallowed:  # a loop, not any(...): no generator per text
                if token in text:
                    break
            else:
                return
        found = self.cutter(disallowed).search(text)
        if found is not None:
            offset, segment = found
            error = SpecialTokenError(
                f"the text contains the special token {segment!r} at offset {offset}, which "
                f"is disallowed; pass allowed_special={{{segment!r}}} (or 'all') to encode it "
                "as the special token, or disallowed_special=() / encode_ordinary() to encode "
                "it as ordinary text"
            )
            error.token, error.offset = segment, offset
            raise error

    def refusal(self, disallowed: FrozenSet[str]) -> Optional[Refusal]:
        """What a batch of texts refuses (:meth:`refuse` of each, the search for the tokens'
        UTF-8 left to the encoder's workers); None when nothing is disallowed."""
        if not disallowed:
            return None
        return Refusal(tuple(token.encode("utf-8") for token in disallowed), partial(self.refuse, disallowed=disallowed))

    def encode(self, text: str, allowed: FrozenSet[str], ordinary: Callable[[str], List[int]]) -> List[int]:
        """The ids of ``text``: each allowed token its id, each part between them
        ``ordinary(part)``."""
        if not allowed:
            return ordinary(text)
        out: List[int] = []
        for segment, is_special in self.cutter(allowed).split(text):
            if is_special:
                out.append(self.ids[segment])
            elif segment:
                out.extend(ordinary(segment))
        return out

    def encode_batch(
        self, texts: Sequence[str], allowed: FrozenSet[str], ordinary: Callable[[List[str]], List[List[int]]]
    ) -> List[List[int]]:
        """:meth:`encode` of each text, the ordinary parts of all texts given to
        ``ordinary`` together (so that they are encoded in one parallel call)."""
        parts: List[str] = []
        plans: List[List[int]] = []  # per text: indexes into parts, or -1 - special id
        cutter = self.cutter(allowed)
        for text in texts:
            plan = []
            for segment, is_special in cutter.split(text):
                if is_special:
                    plan.append(-1 - self.ids[segment])
                else:
                    plan.append(len(parts))
                    parts.append(segment)
            plans.append(plan)
        encoded = ordinary(parts)
        out: List[List[int]] = []
        for plan in plans:
            if len(plan) == 1 and plan[0] >= 0:
                out.append(encoded[plan[0]])
                continue
            ids: List[int] = []
            for k in plan:
                if k >= 0:
                    ids.extend(encoded[k])
                else:
                    ids.append(-1 - k)
            out.append(ids)
        return out


def check_add_special_tokens(add: object) -> None:
    """HF's ``add_special_tokens=``: a tokenizer here adds no token the text does not hold (no
    BOS or EOS template), so False is what it always does, and True is refused with the way
    to do it, rather than ignored.

    >>> check_add_special_tokens(True)
    Traceback (most recent call last):
    ...
    functionalbpe.errors.FunctionalBPEError: add_special_tokens=True: functionalbpe adds no special token on its own (no BOS/EOS template); write it in the text and pass allowed_special={...}, or add its id
    """
    if add not in (False, True) or not isinstance(add, bool):
        raise FunctionalBPEError(f"add_special_tokens must be True or False, got {add!r}")
    if add:
        raise FunctionalBPEError(
            "add_special_tokens=True: functionalbpe adds no special token on its own (no BOS/EOS template); "
            "write it in the text and pass allowed_special={...}, or add its id"
        )

"""The schemes by name: ``make_scheme`` for the tokenizer file and the CLI, ``resolve`` for
``train()``, which takes a name with options or a scheme object alike.

Example::

    >>> make_scheme("markers", punct=True).options()
    {'punct': True, 'digits': False, 'case': False, 'merge_shift_codes': True}
    >>> resolve(make_scheme("plain", "gpt2")).pattern_name
    'gpt2'
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple, Type, Union

from ..errors import FunctionalBPEError
from .base import Scheme
from .plain import PlainScheme


def _functionalizer() -> Type[Scheme]:
    from .functional import Functionalizer

    return Functionalizer


def _boundary_markers() -> Type[Scheme]:
    from .markers import BoundaryMarkers

    return BoundaryMarkers


class _Schemes(Mapping[str, Type[Scheme]]):
    """The name a tokenizer file stores (``Scheme.name``) -> the class that rebuilds the
    scheme. A scheme's module is imported when the scheme is first asked for: loading a plain
    tokenizer does not load the Functionalizer's or the markers' tables."""

    def __init__(self, loaders: Dict[str, Callable[[], Type[Scheme]]]) -> None:
        self._loaders = loaders

    def __getitem__(self, name: str) -> Type[Scheme]:
        return self._loaders[name]()

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)


SCHEMES: Mapping[str, Type[Scheme]] = _Schemes(
    {"plain": lambda: PlainScheme, "functional": _functionalizer, "markers": _boundary_markers}
)


def scheme_class(name: str) -> Type[Scheme]:
    if name not in SCHEMES:
        raise FunctionalBPEError(f"scheme must be one of {', '.join(SCHEMES)}, got {name!r}")
    return SCHEMES[name]


def make_scheme(name: str = "plain", /, pattern: Optional[str] = None, **options: Any) -> Scheme:
    """Build a scheme by name, with its pattern (None: the scheme's default) and options.

    >>> make_scheme("plain", "gpt2").split("Hi there"), make_scheme("functional").name
    (['Hi', ' there'], 'functional')"""
    build: Callable[..., Scheme] = scheme_class(name)  # each class takes its own options
    unknown = [key for key in options if key not in scheme_options(name)]
    if unknown:
        raise FunctionalBPEError(unknown_option(unknown[0], name))
    try:
        return build(pattern=pattern, **options)
    except TypeError as exc:
        raise FunctionalBPEError(f"bad option for scheme {name!r}: {exc}") from None


# Other libraries' names for train()'s options: what a user of minbpe, SentencePiece, HF
# tokenizers or tiktoken types first.
OTHER_NAMES = {
    "verbose": "progress=True (a progress bar; trace= gives one record per merge)",
    "show_progress": "progress=True",
    "num_threads": "threads=",
    "n_threads": "threads=",
    "special_tokens_list": "special_tokens=",
    "min_freq": "min_frequency=",
    "regex": "pattern=",
    "pat_str": "pattern=",
    "vocab": "vocab_size=",
}


def scheme_options(name: str) -> Tuple[str, ...]:
    """The keyword options the scheme ``name`` takes (its constructor's, but ``pattern``).

    >>> scheme_options("plain")
    ('normalize',)
    """
    parameters = inspect.signature(scheme_class(name).__init__).parameters
    return tuple(p for p in parameters if p not in ("self", "pattern"))


def unknown_option(key: str, scheme: str, caller: str = "train") -> str:
    """The message for an option neither ``caller`` nor the scheme takes: the closest valid
    name, or what the option is called here when it is another library's name."""
    from_train = ("vocab_size", "scheme", "pattern", "special_tokens", "min_frequency", "merge_policy",
                  "backend", "progress", "trace", "threads")
    valid = from_train + scheme_options(scheme)
    if key in OTHER_NAMES:
        hint = f"; here it is {OTHER_NAMES[key]}"
    else:
        import difflib

        close = difflib.get_close_matches(key, valid, n=1)
        hint = f"; did you mean {close[0]}=?" if close else ""
    return (f"bad option: neither {caller}() nor the {scheme!r} scheme has an option {key!r}{hint} (the scheme "
            f"takes {', '.join(scheme_options(scheme)) or 'no option'}; see help(functionalbpe.{caller}))")


def scheme_from_file(name: str, pattern: Optional[str], options: Dict[str, Any]) -> Scheme:
    """The scheme a tokenizer file records: :func:`make_scheme`, where an option the file
    does not hold takes the value it had when the file was written (``file_defaults``).

    >>> scheme_from_file("markers", None, {"case": True}).merge_shift_codes
    False
    """
    return make_scheme(name, pattern, **{**scheme_class(name).file_defaults, **options})


def resolve(scheme: Union[str, Scheme], pattern: Optional[str] = None, **options: Any) -> Scheme:
    """The scheme ``train()`` is asked for: a scheme object as it is (its pattern and options
    are its own), or a name built with ``pattern`` and ``options``."""
    if isinstance(scheme, Scheme):
        if pattern is not None or options:
            raise FunctionalBPEError("give pattern and scheme options to the scheme object, not to train()")
        return scheme
    return make_scheme(scheme, pattern, **options)

"""Several languages, one table: weighted language mixes, exactly.

A multilingual corpus is given as ``{language: corpus}``. Each language is counted on its
own (a :class:`~functionalbpe.core.piecetable.PieceTable` per language), and the trainer
sees their sum. A *mix* says how much each language weighs in that sum: its counts are
multiplied by the language's **multiplier** before the tables are added.

**The multipliers.** Weights ``{language: w}`` (positive numbers) are made relative to the
smallest: ``m = w / min(w)``, computed exactly (``Fraction`` of the given floats), so that
every multiplier is at least 1 and no counted piece can vanish. A temperature ``α`` is the
sampling rule of XLM-R and mT5, ``p_l ∝ n_l^α`` where ``n_l`` is the language's size — here
the UTF-8 bytes of its counted pieces. Sampling with ``p_l`` weighs each byte of language
``l`` by ``p_l / n_l ∝ n_l^(α−1)``, so the weight is ``w_l = n_l ** (α − 1)`` (exact when
``α`` is an integer, else the float ``float(n_l) ** (α − 1)``), and then the rule above.
``α = 1`` is the plain concatenation; ``α = 0`` gives every language the same total;
``α = 0.3`` (XLM-R's) lifts small languages.

**The rounding.** A piece counted ``c`` times in a language with multiplier ``m`` counts
``floor(c·m + 1/2)`` (round half up), computed in integers: the result is the table that
``m`` copies of the language would give when ``m`` is an integer, and the nearest integer
otherwise. With every weight equal, the multipliers are 1 and the mix *is* the
concatenation of the languages.

Example::

    >>> en = PieceTable.from_dict({"the": 3, " cat": 1})
    >>> de = PieceTable.from_dict({"die": 2, "the": 1})
    >>> m = multipliers({"en": 10, "de": 1}, {"en": 1.0, "de": 2.5}, None)
    >>> m
    {'en': Fraction(1, 1), 'de': Fraction(5, 2)}
    >>> combine([scale(en, m["en"]), scale(de, m["de"])]).to_dict()
    {'the': 6, ' cat': 1, 'die': 5}
"""
from __future__ import annotations

import math
from array import array
from fractions import Fraction
from typing import Any, Dict, Mapping, Optional, Sequence

from ..errors import FunctionalBPEError
from .parity import check_parity_options
from .piecetable import PieceTable


def table_bytes(table: PieceTable) -> int:
    """The UTF-8 bytes the table counts: each piece's length times its count."""
    offsets = table.offsets
    return sum(c * (offsets[i + 1] - offsets[i]) for i, c in enumerate(table.counts))


# Bounds that keep a mix exact and fast (docs/security.md): the largest multiplier, the
# largest |temperature| (XLM-R uses 0.3; past a few the smallest language dominates anyway).
MAX_MULTIPLIER = 10**12
MAX_TEMPERATURE = 100
MAX_COUNT = 2**63 - 1


def _positive(value: object, what: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise FunctionalBPEError(f"{what} must be a positive number, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise FunctionalBPEError(f"{what} must be a positive, finite number, got {value!r}")
    return Fraction(value)


def multipliers(
    sizes: Mapping[str, int],
    weights: Optional[Mapping[str, float]],
    temperature: Optional[float],
) -> Dict[str, Fraction]:
    """Each language's multiplier (at least 1; see the module's docstring), from ``weights``
    or from ``temperature`` and the languages' ``sizes`` in bytes; all 1 when neither is given.

    >>> multipliers({"en": 100, "el": 1}, None, 0.0)
    {'en': Fraction(1, 1), 'el': Fraction(100, 1)}
    """
    if weights is not None and temperature is not None:
        raise FunctionalBPEError("give weights or temperature, not both")
    if weights is not None:
        if not isinstance(weights, Mapping):
            raise FunctionalBPEError(f"weights must be a dict {{language: weight}}, got {type(weights).__name__}")
        unknown = sorted(set(weights) - set(sizes), key=str)
        if unknown:
            raise FunctionalBPEError(
                f"weights name languages that are not in the corpus: {', '.join(map(repr, unknown))} "
                f"(its languages are {', '.join(map(repr, sizes))})"
            )
        # A language the weights leave out weighs 1, as on the command line.
        raw = {lang: _positive(weights.get(lang, 1), f"the weight of {lang!r}") for lang in sizes}
    elif temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not math.isfinite(temperature):
            raise FunctionalBPEError(f"temperature must be a finite number (XLM-R uses 0.3), got {temperature!r}")
        if abs(temperature) > MAX_TEMPERATURE:
            raise FunctionalBPEError(f"temperature must be from -{MAX_TEMPERATURE} to {MAX_TEMPERATURE} "
                                     f"(XLM-R uses 0.3), got {temperature!r}")
        present = [max(n, 1) for n in sizes.values()]
        if present and abs(temperature - 1) * math.log(max(present) / min(present)) > math.log(MAX_MULTIPLIER):
            raise FunctionalBPEError(
                f"temperature {temperature!r} weighs the languages of {min(present):,} and {max(present):,} bytes "
                f"more than {MAX_MULTIPLIER:.0e} times apart; give a temperature nearer 1")
        # An empty language has nothing to weigh: it gets the weight of one byte. An integral
        # exponent (α = 0, 1, 2) is computed exactly; any other in floating point.
        exponent = temperature - 1
        raw = {
            lang: Fraction(max(n, 1)) ** int(exponent) if float(exponent).is_integer()
            else Fraction(float(max(n, 1)) ** float(exponent))
            for lang, n in sizes.items()
        }
    else:
        return {lang: Fraction(1) for lang in sizes}
    smallest = min(raw.values(), default=Fraction(1))
    out = {lang: w / smallest for lang, w in raw.items()}
    if out and max(out.values()) > MAX_MULTIPLIER:
        what = "weights" if weights is not None else "temperature"
        raise FunctionalBPEError(
            f"{what}: the largest weight is {float(max(out.values())):.3g} times the smallest, more than "
            f"{MAX_MULTIPLIER:.0e}; give weights nearer each other")
    return out


def scale(table: PieceTable, multiplier: Fraction) -> PieceTable:
    """The table with every count ``c`` replaced by ``floor(c·multiplier + 1/2)``.

    >>> scale(PieceTable.from_dict({"a": 3, "b": 1}), Fraction(1, 2)).to_dict()
    {'a': 2, 'b': 1}
    """
    num, den = multiplier.numerator, multiplier.denominator
    if num == den:
        return table
    scaled = [(2 * c * num + den) // (2 * den) for c in table.counts]
    if scaled and max(scaled) > MAX_COUNT:
        raise FunctionalBPEError(
            f"a language's multiplier {float(multiplier):.3g} makes a count of {max(scaled)}, more than 2**63 - 1; "
            "give weights (or a temperature) nearer each other")
    counts = array("q", scaled)
    return PieceTable(table.data, table.offsets, counts)


def combine(tables: Sequence[PieceTable]) -> PieceTable:
    """The sum of several tables: a piece's count is the sum of its counts, and pieces come
    in order of first occurrence (the first table's, then the new ones of the next...).

    >>> combine([PieceTable.from_dict({"a": 1}), PieceTable.from_dict({"b": 2, "a": 3})]).to_dict()
    {'a': 4, 'b': 2}
    """
    if len(tables) == 1:
        return tables[0]
    total: Dict[bytes, int] = {}
    for table in tables:
        view, offsets = memoryview(table.data), table.offsets
        for i, c in enumerate(table.counts):
            key = bytes(view[offsets[i] : offsets[i + 1]])
            total[key] = total.get(key, 0) + c
    offsets = array("q", [0])
    running = 0
    for key in total:
        running += len(key)
        offsets.append(running)
    return PieceTable(b"".join(total), offsets, array("q", total.values()))


def parity_options_for(languages: Sequence[str], dev: Optional[Mapping[str, Any]],
                    target_ratios: Optional[Mapping[str, float]], variant: str, window_size: int,
                    alpha: float, global_merges: int) -> Dict[str, Any]:
    """The parity options of ``train(objective="parity", ...)``, checked, as
    :func:`functionalbpe.core.trainer.learn_parity_merges` takes them (ratios in the order of
    ``languages``)."""
    for name, given in (("dev", dev), ("target_ratios", target_ratios)):
        if given is None:
            continue
        if not isinstance(given, Mapping):
            raise FunctionalBPEError(f"{name} must be a dict {{language: ...}}, got {type(given).__name__}")
        if set(given) != set(languages):
            raise FunctionalBPEError(
                f"{name} must name the languages of the corpus ({', '.join(map(repr, languages))}), "
                f"got {', '.join(map(repr, given))}"
            )
    if dev is None and target_ratios is None:
        raise FunctionalBPEError(
            "objective='parity' measures each language on dev texts (dev={language: texts}; on the command "
            "line --dev NAME=PATH for every --lang) or against target_ratios={language: ratio} (--target-ratio "
            "NAME=R); neither was given"
        )
    if dev is not None and target_ratios is not None:
        raise FunctionalBPEError("give dev texts (--dev) or target ratios (--target-ratio), not both")
    ratios = None if target_ratios is None else [target_ratios[lang] for lang in languages]
    options: Dict[str, Any] = dict(target_ratios=ratios, variant=variant, window_size=window_size,
                                   alpha=alpha, global_merges=global_merges)
    try:
        check_parity_options(len(languages), None if dev is None else [{}] * len(languages), **options)
    except ValueError as exc:
        raise FunctionalBPEError(str(exc).replace("dev texts or target_ratios (one of them)",
                                                  "dev={language: texts} or target_ratios={language: ratio}, "
                                                  "not both")) from None
    return options


def describe(languages: Sequence[str], objective: str, factors: Mapping[str, Any],
                 weights: Any, temperature: Any, parity_options: Mapping[str, Any], has_dev: bool) -> Dict[str, Any]:
    """What the tokenizer records of a multilingual training (``tok.training``, JSON data).

    >>> factors = {"en": Fraction(1), "el": Fraction(5, 2)}
    >>> describe(["en", "el"], "frequency", factors, {"en": 2, "el": 5}, None, {}, False)["mix"]
    {'weights': {'en': 2.0, 'el': 5.0}, 'temperature': None, 'multipliers': {'en': '1', 'el': '5/2'}}
    """
    out: Dict[str, Any] = {"objective": objective, "languages": list(languages)}
    if weights is not None or temperature is not None:
        out["mix"] = {"weights": None if weights is None else {k: float(v) for k, v in weights.items()},
                      "temperature": temperature,
                      "multipliers": {lang: str(factors[lang]) for lang in languages}}
    if objective == "parity":
        ratios = parity_options["target_ratios"]
        out["parity"] = {
            "measure": "dev" if has_dev else "target_ratios",
            "target_ratios": None if ratios is None else dict(zip(languages, map(float, ratios))),
            "variant": parity_options["variant"], "window_size": parity_options["window_size"],
            "alpha": parity_options["alpha"], "global_merges": parity_options["global_merges"],
        }
    return out


__all__ = ["multipliers", "scale", "combine", "table_bytes", "parity_options_for", "describe"]

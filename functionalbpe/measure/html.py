"""The report as one self-contained HTML page: tables, and plots drawn with matplotlib.

The page needs no network and no other file: the style sheet is inline and every plot is a
PNG embedded as base64. matplotlib is an optional extra (``pip install
functionalbpe[plot]``); without it the page has the tables and says how to get the plots.

Plots, corpora in the order of the tables (most expensive first, at the top):

1. tokens per word and bytes per token, by corpus and tokenizer, on a log scale when one
   corpus's bar is ten times another's (Chinese tokens per word would flatten the rest);
2. tokens relative to the baseline tokenizer, by corpus (1 = as many as the baseline);
3. the merge-savings curve of each of our tokenizers: the count of each merge when it was
   made, and the cumulative share of the savings of all merges;
4. the Lorenz curve of each tokenizer's token counts across corpora (two corpora or more);
5. tokens per number by its digits, and the entropy of how numbers of each length are split;
6. whitespace tokens spent on an indent, by its depth (Python corpora).

Before the plots, an example sentence is shown cut into each tokenizer's tokens.
"""
from __future__ import annotations

import base64
import html
import io
from typing import Any, Dict, List, Optional, Tuple

from .._version import __version__
from .measures import RESULTS
from .metrics import merge_savings
from .report_view import ReportView
from ..util.display import visible
from .tables import Table, example_lines, tables, tokenizer_lines



# A bar this many times longer than another puts the axis on a log scale.
LOG_SCALE_RATIO = 10

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 100em;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #eee; white-space: nowrap; }
th { background: #f4f4f4; text-align: left; position: sticky; top: 0; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.first td { border-top: 1px solid #bbb; }
.note { color: #666; font-size: 0.85em; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0; }
.wide { overflow-x: auto; }
code { background: #f4f4f4; padding: 0 0.2em; }
.tokens span { padding: 0.1em 0; border-radius: 2px; white-space: pre; font-family: ui-monospace, monospace; }
.tokens span.a { background: #dbe9f6; } .tokens span.b { background: #f6e3cf; }
.tokens td { white-space: normal; }
"""


def render_html(report: "ReportView", title: str = "Tokenizer report") -> str:
    s = report.settings
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="note">functionalbpe {html.escape(__version__)}. Baseline: <b>{html.escape(report.baseline)}</b>. '
        f"Context {s['context']:,} tokens; embedding width {s['width']:,}, {s['bytes_per_param']:g} bytes per "
        "parameter. Every measure is defined, with its formula, in docs/metrics.md.</p>",
        "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in tokenizer_lines(report)) + "</ul>",
    ]
    parts += example_html(report)
    images = plots(report)
    if images is None:
        parts.append(
            '<p class="note">Plots need matplotlib: <code>pip install matplotlib</code> (from a clone of functionalbpe: <code>pip install -e ".[plot]"</code>).</p>'
        )
    else:
        for caption, data, note in images:
            parts.append(f"<h2>{html.escape(caption)}</h2>")
            parts.append(f'<img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">')
            parts.append(f'<p class="note">{html.escape(note)}</p>')
    for table in tables(report):
        parts.append(f"<h2>{html.escape(table.title)}</h2>")
        parts.append(f'<div class="wide">{render_table_html(table)}</div>')
        parts += [f'<p class="note">{html.escape(n)}</p>' for n in table.notes]
    parts.append("<h2>Unused entries and duplicate families</h2>")
    for name, unused, families in example_lines(report):
        parts.append(f"<p><b>{html.escape(name)}</b><br>longest unused: ")
        parts.append(", ".join(f"<code>{html.escape(u)}</code>" for u in unused) or "–")
        parts.append("<br>largest duplicate families: ")
        parts.append("; ".join(f"<code>{html.escape(f)}</code>" for f in families) or "–")
        parts.append("</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def example_html(report: "ReportView") -> List[str]:
    """The example sentence cut into each tokenizer's tokens, side by side."""
    example = report.example()
    if not example["text"]:
        return []
    rows = []
    for name, pieces in example["tokens"].items():
        spans = "".join(
            f'<span class="{"ab"[i % 2]}">{html.escape(visible(p))}</span>' for i, p in enumerate(pieces)
        )
        rows.append(f'<tr><td>{html.escape(name)}</td><td class="n">{len(pieces)}</td><td>{spans}</td></tr>')
    return [
        "<h2>An example, token by token</h2>",
        f'<p class="note">{html.escape(example["text"])}</p>',
        '<table class="tokens"><thead><tr><th>tokenizer</th><th class="n">tokens</th><th>tokens, alternately shaded'
        "</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>",
    ]


def render_table_html(table: Table) -> str:
    def cls(num: bool) -> str:
        return ' class="n"' if num else ""

    out = ["<table><thead><tr>"]
    out += [f"<th{cls(n)}>{html.escape(h)}</th>" for h, n in zip(table.headers, table.numeric)]
    out.append("</tr></thead><tbody>")
    for row in table.rows:
        # A row that starts a new group (its first cell is filled) gets a rule above it.
        first = ' class="first"' if row[0] and table.headers[0] == "corpus" else ""
        out.append(f"<tr{first}>" + "".join(f"<td{cls(n)}>{html.escape(c)}</td>" for c, n in zip(row, table.numeric)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


# -- plots ----------------------------------------------------------------------------------------


def plots(report: "ReportView") -> Optional[List[Tuple[str, str, str]]]:
    """``[(caption, base64 PNG, note), ...]``, or None when matplotlib is not installed."""
    try:
        # Figures made without pyplot need no backend and leave a user's matplotlib state alone.
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        return None
    corpora = report.corpus_order()
    names = list(report.tokenizers)
    # One colour per tokenizer in every plot, whichever tokenizers a plot leaves out.
    palette = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {name: palette[i % len(palette)] for i, name in enumerate(names)}
    value: Dict[tuple, Any] = {(r["corpus"], r["tokenizer"]): r for r in report.results()}
    out = []

    fig = Figure(figsize=(12, 1.2 + 0.16 * len(corpora) * len(names)))
    axes = fig.subplots(1, 2, sharey=True)
    for ax, key in ((axes[0], "fertility"), (axes[1], "bytes_per_token")):
        _grouped_bars(ax, corpora, names, colour, lambda c, n: value[c, n][key])
        log = _log_scale_if_needed(ax, [value[c, n][key] for c in corpora for n in names])
        ax.set_xlabel(f"{RESULTS[key].label} ({RESULTS[key].direction}){', log scale' if log else ''}")
    _legend_on_top(fig, axes[0], len(names))
    out.append((
        "Tokens per word and bytes per token",
        _png(fig),
        "Words are whitespace-separated: in a language written without spaces (Chinese, Japanese) "
        "a 'word' is a phrase, so its tokens per word are not comparable with the others'.",
    ))

    others = [n for n in names if n != report.baseline]
    if others:
        fig = Figure(figsize=(8, 1.2 + 0.16 * len(corpora) * len(others)))
        ax = fig.subplots()
        _grouped_bars(ax, corpora, others, colour, lambda c, n: value[c, n]["relative_tokens"])
        ax.axvline(1.0, color="#444", linewidth=1)
        ax.set_xlabel(f"tokens relative to {report.baseline} (below 1: fewer tokens)")
        _legend_on_top(fig, ax, len(others))
        out.append((
            f"Tokens relative to {report.baseline}",
            _png(fig),
            f"Tokens each tokenizer needs for a corpus, divided by what {report.baseline} needs for it.",
        ))

    curves = {row["name"]: row["merge_counts"] for row in report.tokenizer_rows() if row["merge_counts"]}
    if curves:
        fig = Figure(figsize=(12, 4))
        left, right = fig.subplots(1, 2)
        for name, counts in curves.items():
            ranks = range(1, len(counts) + 1)
            left.plot(ranks, counts, label=name, linewidth=1, color=colour[name])
            saved = merge_savings(counts)
            right.plot(ranks, [x / saved[-1] for x in saved], label=name, linewidth=1, color=colour[name])
        left.set_yscale("log")
        left.set_xlabel("merge number")
        left.set_ylabel("count when merged (tokens saved)")
        right.set_xlabel("merge number")
        right.set_ylabel("share of all merges' savings")
        left.legend(fontsize=8)
        for ax in (left, right):
            ax.grid(True, alpha=0.3)
        out.append((
            "Merge savings",
            _png(fig),
            "On each tokenizer's own training text: the count of each merge when it was made (the tokens it "
            "saved), and the running share of the savings of all merges.",
        ))
    out += _family_plots(report, names, colour)
    return out


def _family_plots(report: "ReportView", names: List[str], colour: Dict[str, str]) -> List[Tuple[str, str, str]]:
    """The Lorenz curves, the numbers and the indents: plots of the measures' own tables."""
    from matplotlib.figure import Figure

    out = []
    rows = {row["name"]: row for row in report.tokenizer_rows()}
    curves = {n: rows[n]["lorenz_curve"] for n in names if rows[n]["lorenz_curve"]}
    if curves:
        fig = Figure(figsize=(5.5, 5))
        ax = fig.subplots()
        ax.plot([0, 1], [0, 1], color="#888", linewidth=1, linestyle="--", label="equal")
        for name, points in curves.items():
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, linewidth=1.2,
                    color=colour[name], label=f"{name} (Gini {rows[name]['gini_tokens']:.3f})")
        ax.set_xlabel("share of corpora, cheapest first")
        ax.set_ylabel("share of tokens")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        out.append(("Lorenz curve of tokens across corpora", _png(fig),
                    "The corpora read as languages: on parallel text (the same content in each) the diagonal is a "
                    "tokenizer that costs every language the same; the Gini coefficient is twice the area between."))
    totals = {row["tokenizer"]: row for row in report.totals()}
    numbers = {n: totals[n] for n in names if totals[n]["tokens_per_number"]}
    if numbers:
        fig = Figure(figsize=(12, 4))
        left, right = fig.subplots(1, 2)
        for name, row in numbers.items():
            per = row["tokens_per_number"]
            left.plot([int(d) for d in per], list(per.values()), marker="o", color=colour[name], label=name)
            split = row["digit_split_entropy"] or {}
            shown = {int(d): v for d, v in split.items() if int(d) <= 12}
            right.plot(list(shown), list(shown.values()), marker="o", color=colour[name], label=name)
        left.set_xlabel("digits (10: ten or more)")
        left.set_ylabel("tokens per number")
        right.set_xlabel("digits")
        right.set_ylabel("entropy of the split patterns, bits")
        for ax in (left, right):
            ax.grid(True, alpha=0.3)
        left.legend(fontsize=8)
        out.append(("Numbers: tokens and splits by length", _png(fig),
                    "All corpora together, on the text whose token boundaries are known. Entropy 0: every number of "
                    "that length is split the same way."))
    indents = {n: totals[n]["indent_tokens_by_depth"] for n in names if totals[n]["indent_tokens_by_depth"]}
    if indents:
        fig = Figure(figsize=(6, 4))
        ax = fig.subplots()
        for name, per in indents.items():
            ax.plot([int(d) for d in per], list(per.values()), marker="o", color=colour[name], label=name)
        ax.set_xlabel("indent depth")
        ax.set_ylabel("whitespace tokens per indent")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        out.append(("Indentation: tokens by depth", _png(fig),
                    "Python corpora: the tokens of whitespace only that an indent of each depth costs, on average."))
    return out


def _log_scale_if_needed(ax: Any, values: List[Any]) -> bool:
    """A log scale when the largest bar is LOG_SCALE_RATIO times the smallest (so that one
    language cannot flatten the others)."""
    positive = [v for v in values if v]
    if positive and max(positive) >= LOG_SCALE_RATIO * min(positive):
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # labels at the powers of ten only
        return True
    return False


def _grouped_bars(ax: Any, corpora: List[str], names: List[str], colour: Dict[str, str], get: Any) -> None:
    """Horizontal bars, one group per corpus (first corpus on top), one bar per tokenizer."""
    height = 0.8 / len(names)
    for i, name in enumerate(names):
        ys = [len(corpora) - 1 - c + 0.4 - height * (i + 0.5) for c in range(len(corpora))]
        xs = [get(c, name) or 0 for c in corpora]
        ax.barh(ys, xs, height=height, label=name, color=colour[name])
    ax.set_yticks(range(len(corpora)))
    ax.set_yticklabels(list(reversed(corpora)), fontsize=8)
    ax.set_ylim(-0.6, len(corpora) - 0.4)
    ax.grid(True, axis="x", alpha=0.3)


def _legend_on_top(fig: Any, ax: Any, columns: int) -> None:
    """One legend above the plots, where no bar can hide under it."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=columns, fontsize=9, frameon=False)
    room = 0.35 / fig.get_figheight()  # the legend's height as a share of the figure's
    fig.tight_layout(rect=(0, 0, 1, 1 - room))


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    if not fig.legends:
        fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=90)
    return base64.b64encode(buffer.getvalue()).decode("ascii")

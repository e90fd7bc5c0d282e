"""The report's tables, and their rendering for a terminal and as Markdown.

:func:`tables` turns a :class:`~functionalbpe.measure.report.Report` into a list of
:class:`Table` (title, headers, formatted cells, which columns are numbers), taking each
column's header and format from the measures' registry (:mod:`functionalbpe.measure.measures`);
the terminal, Markdown and HTML renderers all show the same tables, so they cannot disagree.

Example::

    >>> print(render_table_text(Table("t", ["a", "n"], [["x", "1,234"]], [False, True])))
    a      n
    -  -----
    x  1,234
"""
from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple

from ..util.display import visible
from .measures import FAIRNESS, FAMILIES, RESULT_MEASURES, VOCABULARY_MEASURES, Measure, fmt_int
from .measures import columns as measure_columns

if TYPE_CHECKING:  # pragma: no cover
    from .report_view import ReportView


@dataclass
class Table:
    title: str
    headers: List[str]
    rows: List[List[str]]
    numeric: List[bool]
    notes: List[str] = field(default_factory=list)


def _cells(row: Dict[str, Any], measures: List[Measure]) -> List[str]:
    return [m.format(row[m.key]) for m in measures]


def tables(report: "ReportView") -> List[Table]:
    """The tables of a report, in the order every renderer shows them."""
    settings = report.settings
    columns = measure_columns(RESULT_MEASURES, report)
    headers = ["corpus", "tokenizer"] + [m.column_header(settings) for m in columns]
    numeric = [False, False] + [m.numeric for m in columns]
    by_corpus: List[List[str]] = []
    previous = None
    for row in report.results():
        label = row["corpus"] if row["corpus"] != previous else ""
        previous = row["corpus"]
        by_corpus.append([label, row["tokenizer"]] + _cells(row, columns))
    results = Table(
        "By corpus",
        headers,
        by_corpus,
        numeric,
        [f"Corpora sorted by the {settings['sort_by']} of {report.baseline}, most expensive first."],
    )
    totals = Table(
        "All corpora together",
        ["tokenizer"] + headers[2:],
        [[row["tokenizer"]] + _cells(row, columns) for row in report.totals()],
        numeric[1:],
    )
    vocab_columns = measure_columns(VOCABULARY_MEASURES, report)
    vocab = Table(
        "Vocabularies",
        ["tokenizer"] + [m.column_header(settings) for m in vocab_columns],
        [[row["name"]] + _cells(row, vocab_columns) for row in report.tokenizer_rows()],
        [False] + [m.numeric for m in vocab_columns],
        [
            "unused: entries (special tokens left out) never seen in any corpus; "
            "learned entries: those of two characters or more, the ones the family counts look at.",
        ],
    )
    corpora = Table(
        "Corpora",
        ["corpus", "documents", "words", "characters", "bytes"],
        [
            [c["name"], fmt_int(c["documents"]), fmt_int(c["words"]), fmt_int(c["chars"]), fmt_int(c["bytes"])]
            for c in report.corpus_rows()
        ],
        [False, True, True, True, True],
    )
    return [results, totals, vocab, corpora] + family_tables(report)


def family_tables(report: "ReportView") -> List[Table]:
    """One table per family of measures (numbers, code, ...), each corpus's rows then the
    totals ("all"); a family none of whose columns says anything in this report is left out."""
    settings = report.settings
    out = []
    rows = report.results() + [dict(row, corpus="all") for row in report.totals()]
    for family in FAMILIES:
        columns = [m for m in measure_columns(RESULT_MEASURES, report, family)
                   if any(row[m.key] is not None for row in rows)]
        if not any(row[m.key] for m in columns for row in rows):
            continue  # nothing measured in this family (no numbers, no code): no table
        cells: List[List[str]] = []
        previous = None
        for row in rows:
            label = row["corpus"] if row["corpus"] != previous else ""
            previous = row["corpus"]
            cells.append([label, row["tokenizer"]] + _cells(row, columns))
        out.append(Table(family, ["corpus", "tokenizer"] + [m.column_header(settings) for m in columns],
                         cells, [False, False] + [m.numeric for m in columns]))
    fair = measure_columns(VOCABULARY_MEASURES, report, FAIRNESS)
    if len(report.text_counts) > 1:
        out.append(Table(
            FAIRNESS,
            ["tokenizer"] + [m.column_header(settings) for m in fair],
            [[row["name"]] + _cells(row, fair) for row in report.tokenizer_rows()],
            [False] + [m.numeric for m in fair],
            ["The corpora read as languages: fair on parallel text (the same content in each). "
             "Premium: a corpus's tokens over the reference corpus's."],
        ))
    return out


def tokenizer_lines(report: "ReportView") -> List[str]:
    """One line per tokenizer: its name and what it is."""
    baseline = report.baseline
    return [
        f"{row['name']}: {row['description']}{' (baseline)' if row['name'] == baseline else ''}"
        for row in report.tokenizer_rows()
    ]


def example_lines(report: "ReportView") -> List[Tuple[str, List[str], List[str]]]:
    """Per tokenizer: (name, unused examples, duplicate families), whitespace made visible."""
    out = []
    for row in report.tokenizer_rows():
        unused = [visible(s) for s in row["unused_examples"]]
        families = [" ".join(visible(s) for s in f) for f in row["duplicate_examples"]]
        out.append((row["name"], unused, families))
    return out


# -- text ---------------------------------------------------------------------------------------


def render_table_text(table: Table) -> str:
    widths = [max([len(h)] + [len(r[i]) for r in table.rows]) for i, h in enumerate(table.headers)]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, table.numeric)]
        return "  ".join(parts).rstrip()

    out = [line(table.headers), line(["-" * w for w in widths])]
    out += [line(r) for r in table.rows]
    return "\n".join(out)


def render_text(report: "ReportView") -> str:
    parts = [line for line in tokenizer_lines(report)]
    for table in tables(report):
        parts.append("")
        parts.append(table.title)
        parts.append(render_table_text(table))
        parts += table.notes
    return "\n".join(parts) + "\n"


# -- Markdown -------------------------------------------------------------------------------------


def _html_escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _md_cell(text: str) -> str:
    """Text for a Markdown line or cell: names are data, so HTML in them is escaped (a
    renderer would otherwise run it), as are the table's pipes."""
    return _html_escaped(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_code(text: str) -> str:
    """A code span that holds ``text`` whatever backticks it has (CommonMark: a fence longer
    than any run inside, padded with spaces), so a token cannot end it early."""
    runs = [len(r) for r in re.findall("`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if runs or text.startswith(" ") else ""
    return f"{fence}{pad}{text.replace(chr(10), ' ')}{pad}{fence}"


def render_table_markdown(table: Table) -> str:
    out = ["| " + " | ".join(_md_cell(h) for h in table.headers) + " |"]
    out.append("|" + "|".join("---:" if num else "---" for num in table.numeric) + "|")
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(out)


def render_markdown(report: "ReportView", title: str = "Tokenizer report") -> str:
    s = report.settings
    parts = [
        f"# {title}",
        "",
        f"Baseline: **{_md_cell(report.baseline)}**. Context: {s['context']:,} tokens. Embedding: width {s['width']:,}, "
        f"{s['bytes_per_param']:g} bytes per parameter. Every measure is defined in docs/metrics.md.",
        "",
    ]
    parts += [f"- {_md_cell(line)}" for line in tokenizer_lines(report)]
    for table in tables(report):
        parts += ["", f"## {_html_escaped(table.title)}", "", render_table_markdown(table)]
        if table.notes:
            parts += [""] + [_html_escaped(note) for note in table.notes]
    parts += ["", "## Unused entries and duplicate families", ""]
    for name, unused, families in example_lines(report):
        parts.append(f"**{_md_cell(name)}**")
        parts.append(f"- longest unused: {', '.join(_md_code(u) for u in unused) or '–'}")
        parts.append(f"- largest duplicate families: {'; '.join(_md_code(f) for f in families) or '–'}")
        parts.append("")
    return "\n".join(parts).rstrip("\n") + "\n"

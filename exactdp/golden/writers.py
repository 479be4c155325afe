"""Deterministic writers of the golden tables: CSV, JSON, booktabs LaTeX and Markdown.

Every writer is a pure function of the rows: no timestamps, no locale, no machine-dependent
formatting, ``"\\n"`` line ends, UTF-8, ASCII-only JSON.  Every cell is a string (exact decimals,
``p/q`` fractions, ``repr`` of directed floats, or ``""``), so the CSV and the JSON of a table hold
the same text and any language reads them without a float parser.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from exactdp.core.enclosure import Enclosure

__all__ = [
    "COLUMNS",
    "SCHEMA_VERSION",
    "check_row",
    "csv_text",
    "enclosure_cells",
    "json_text",
    "latex_text",
    "markdown_text",
]

#: Version of the row schema documented in tables/README.md (bumped on any change of columns).
SCHEMA_VERSION = 1

#: The columns of every table, in order (tables/README.md documents each).
COLUMNS: tuple[str, ...] = (
    "table", "query", "method", "options", "eps", "delta", "k", "mechanisms", "at",
    "lower", "upper", "exact", "exact_log", "digits", "float_lower", "float_upper", "note", "source",
)


def enclosure_cells(enc: Enclosure) -> dict[str, str]:
    """The value columns of a row from an Enclosure (outward-rounded strings, directed floats).

    >>> from fractions import Fraction
    >>> c = enclosure_cells(Enclosure.exact_value(Fraction(1, 3), digits=5))
    >>> c["lower"], c["upper"], c["exact"], c["float_lower"], c["float_upper"]
    ('0.333333', '0.333334', '1/3', '0.3333333333333333', '0.33333333333333337')
    """
    from exactdp.core.numbers import format_fraction

    return {
        "lower": enc.lower_str(),
        "upper": enc.upper_str(),
        "exact": format_fraction(enc.exact) if enc.exact is not None else "",
        "exact_log": f"log({format_fraction(enc.exact_log)})" if enc.exact_log is not None else "",
        "digits": str(enc.certified_digits()),  # what lower and upper certify (docs/contracts.md §4)
        "float_lower": repr(enc.float_lower()),  # float ok: directed float64 bound, written exactly by repr
        "float_upper": repr(enc.float_upper()),  # float ok: directed float64 bound, written exactly by repr
    }


def check_row(row: Mapping[str, Any]) -> None:
    """Raise ValueError unless ``row`` has exactly the schema's columns, each a string."""
    if tuple(row) != COLUMNS:
        missing = [c for c in COLUMNS if c not in row]
        extra = [c for c in row if c not in COLUMNS]
        raise ValueError(f"row columns must be COLUMNS in order; {missing=} {extra=}")
    bad = [c for c, v in row.items() if not isinstance(v, str)]
    if bad:
        raise ValueError(f"row cells {bad} must be strings")


def csv_text(rows: Sequence[Mapping[str, str]]) -> str:
    """The CSV file of a table: a header line, then one line per row, ``\\n`` line ends."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(COLUMNS)
    for r in rows:
        check_row(r)
        w.writerow([r[c] for c in COLUMNS])
    return buf.getvalue()


def json_text(meta: Mapping[str, Any], rows: Sequence[Mapping[str, str]]) -> str:
    """The JSON file of a table: ``{"table", "title", "description", "source", "schema", "columns", "rows"}``.

    Keys of the header are sorted, row keys follow COLUMNS; one row per line keeps diffs readable.
    """
    for r in rows:
        check_row(r)
    head = {k: meta[k] for k in sorted(meta)}
    head["schema"] = SCHEMA_VERSION
    head["columns"] = list(COLUMNS)
    head_text = json.dumps(head, ensure_ascii=True, sort_keys=False, separators=(", ", ": "))
    assert head_text.endswith("}")
    lines = [json.dumps({c: r[c] for c in COLUMNS}, ensure_ascii=True, separators=(", ", ": ")) for r in rows]
    body = ",\n  ".join(lines)
    return head_text[:-1] + ', "rows": [\n  ' + body + ("\n]}\n" if lines else "]}\n")


# -- exports for papers ------------------------------------------------------------------------

#: Columns shown by the paper exports unless others are asked for.
EXPORT_COLUMNS: tuple[str, ...] = ("query", "method", "eps", "delta", "k", "mechanisms", "at", "lower", "upper")

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def _latex_escape(s: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in s)


def _export_columns(rows: Sequence[Mapping[str, str]], columns: Sequence[str] | None) -> list[str]:
    cols = list(columns) if columns else [c for c in EXPORT_COLUMNS if any(r.get(c, "") for r in rows)]
    unknown = [c for c in cols if c not in COLUMNS]
    if unknown:
        raise ValueError(f"columns={unknown} must be among {list(COLUMNS)}")
    return cols or ["table"]


def latex_text(rows: Sequence[Mapping[str, str]], *, columns: Sequence[str] | None = None,
               caption: str | None = None, label: str | None = None) -> str:
    """A booktabs ``tabular`` of the rows (``\\usepackage{booktabs}``), numbers in ``\\texttt``."""
    cols = _export_columns(rows, columns)
    out = []
    if caption is not None or label is not None:
        out.append("\\begin{table}\n\\centering")
        if caption is not None:
            out.append(f"\\caption{{{_latex_escape(caption)}}}")
        if label is not None:
            out.append(f"\\label{{{_latex_escape(label)}}}")
    out.append("\\begin{tabular}{" + "l" * len(cols) + "}")
    out.append("\\toprule")
    out.append(" & ".join(_latex_escape(c) for c in cols) + " \\\\")
    out.append("\\midrule")
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c, "")
            cells.append(f"\\texttt{{{_latex_escape(v)}}}" if v and c not in ("query", "method", "note", "source") else _latex_escape(v))
        out.append(" & ".join(cells) + " \\\\")
    out.append("\\bottomrule")
    out.append("\\end{tabular}")
    if caption is not None or label is not None:
        out.append("\\end{table}")
    return "\n".join(out) + "\n"


def _md_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_text(rows: Sequence[Mapping[str, str]], *, columns: Sequence[str] | None = None) -> str:
    """A GitHub-flavoured Markdown pipe table of the rows."""
    cols = _export_columns(rows, columns)
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in rows:
        out.append("| " + " | ".join(_md_escape(r.get(c, "")) for c in cols) + " |")
    return "\n".join(out) + "\n"

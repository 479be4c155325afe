"""``exactdp batch``: JSON lines in (stdin), JSON lines out (stdout), one result per query line.

Each line is answered by :func:`exactdp.query.run_query`; a bad line gets ``{"error": "..."}`` and
the batch goes on; ``--jobs N`` answers in N processes and keeps the input order.  The exit status
is the largest of the lines' statuses (a "not private" answer counts as 0; docs/contracts.md §3).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from exactdp import query
from exactdp.cli.options import add_memory
from exactdp.cli.output import EXIT_OK, EXIT_USAGE, err_line, error_message, status_of
from exactdp.core import executor, progress
from exactdp.core.errors import ExactDPError, InvalidParameterError, PrecisionError
from exactdp.core.files import MAX_LINE_BYTES, bounded_lines, decode_text
from exactdp.core.numbers import DEFAULT_DIGITS, parse_digits
from exactdp.model.inputs import load_json_exact

__all__ = ["EXAMPLE", "add_parser", "run_batch"]

#: the epilog of ``exactdp batch --help`` (its example is run by tests/docs/test_examples_run.py)
EXAMPLE = """\
each input line is a JSON object: the keys of "inputs" plus "query", "method", "digits", e.g.
  {"query": "delta", "eps": "0.1", "delta": "0.001", "k": 30, "at_eps": "1"}
  {"query": "epsilon", "mechanisms": [["0.1", "0"], ["0.2", "1e-6"]], "at_delta": "1e-3"}
  {"query": "check", "eps": "1", "k": 10, "eps_g": "8", "delta_g": "0.01"}
JSON numbers are read as the decimal text they are written as (0.1 is exactly 1/10).
Each line gets one result line, in order; a bad line gets {"error": "..."} and the batch goes on.
Blank lines are skipped.

--jobs N answers in N processes, --executor dask://HOST:PORT on a Dask cluster, --shard I/N only
the lines I, I+N, I+2N, ... (each result then carries its "line"); docs/cluster.md.

examples:
  printf '%s\\n' '{"query":"epsilon","eps":"0.1","delta":"0.001","k":30,"at_delta":"0.05"}' | exactdp batch
  printf '%s\\n' '{"query":"delta","eps":"0.1","k":30,"at_eps":"1","id":1}' '{"query":"delta","eps":"0.2","k":9,"at_eps":"1","id":2}' | exactdp batch --jobs 2 --shard 2/2"""


#: query lines per task sent to a worker (local processes; a Dask cluster, where a round trip costs more)
_CHUNK = {"local": 4, "dask": 16}


def add_parser(sub: Any, fmt: type[argparse.HelpFormatter]) -> None:
    """The parser of ``exactdp batch``, added to the subcommands ``sub``."""
    p = sub.add_parser("batch", help="JSON lines in (stdin), JSON lines out (stdout)", formatter_class=fmt,
                       description="Answer one query per input line.", epilog=EXAMPLE)
    add_memory(p)
    p.add_argument("--digits", default=None, metavar="N",
                   help=f"default significant digits for lines without 'digits' (default {DEFAULT_DIGITS})")
    p.add_argument("--jobs", default="1", metavar="N",
                   help="answer the queries in N parallel processes (the output keeps the input order)")
    p.add_argument("--executor", default=None, metavar="URL",
                   help="where the queries are answered: 'local' (default: --jobs processes) or "
                        "dask://HOST:PORT, a running Dask scheduler (pip install 'exactdp[dask]'); docs/cluster.md")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="answer only the I-th of N round-robin slices of the query lines (lines I, I+N, ...); "
                        "each result then says its input line number ('line'), so shards merge by sorting on it")


def _input_lines(stdin: Any) -> Iterator[tuple[int, str | None, str | None]]:
    """(physical line number, text or None, decoding error or None) for every line of stdin."""
    buf = getattr(stdin, "buffer", None)
    for n, (raw, whole) in enumerate(bounded_lines(buf if buf is not None else stdin), 1):
        if not whole:
            yield n, None, (f"line {n} is longer than {MAX_LINE_BYTES >> 20} MiB, the longest batch line "
                            "exactdp reads; split the query or merge equal mechanisms with a count")
        elif isinstance(raw, bytes):
            try:
                yield n, decode_text(raw, f"line {n}"), None
            except ExactDPError as e:
                yield n, None, err_line(e)
        else:
            yield n, raw.lstrip("\ufeff") if n == 1 else raw, None


def _answer_line(item: tuple[int, str | None, str | None, int, bool]) -> tuple[dict[str, Any], int]:
    """The result object of one batch line and the exit status it stands for (with its line
    number under ``--shard``)."""
    out, status = _answer(item)
    if item[4]:
        out["line"] = item[0]
    return out, status


def _answer(item: tuple[int, str | None, str | None, int, bool]) -> tuple[dict[str, Any], int]:
    n, line, decode_error, default_digits, _numbered = item
    if decode_error is not None:
        return {"error": decode_error}, EXIT_USAGE
    assert line is not None
    obj: Any = None
    start = time.monotonic()
    try:
        obj = load_json_exact(line)
        return query.run_query(obj, default_digits=default_digits), EXIT_OK
    except json.JSONDecodeError as e:
        out: dict[str, Any] = {"error": f"line {n}: not valid JSON: {e}"}
        status = EXIT_USAGE
    except (Exception, MemoryError) as e:  # noqa: BLE001 - one bad line never stops the batch
        kind = obj.get("query") if isinstance(obj, dict) else None
        msg = error_message(e, kind if isinstance(kind, str) else None, time.monotonic() - start
                            if isinstance(e, PrecisionError) else None)
        out = {"error": f"line {n}: {msg.removeprefix('error: ')}"}
        status = status_of(e, kind if isinstance(kind, str) else None)
    if isinstance(obj, dict) and "id" in obj:
        out["id"] = obj["id"]
    return out, status


def run_batch(args: argparse.Namespace, stdin: Any, stdout: TextIO) -> int:
    """``exactdp batch``: one result line per input line, in order; returns the largest exit
    status of the lines (a "not private" answer counts as 0)."""
    default_digits = parse_digits(args.digits) if args.digits is not None else DEFAULT_DIGITS
    spec = executor.parse_executor(args.executor, parse_digits(args.jobs, "jobs"))
    which = executor.parse_shard(args.shard)
    if stdin is None:
        raise InvalidParameterError("batch reads its queries from standard input, which is closed; "
                                    "for example: exactdp batch < queries.jsonl")
    numbered = which is not None
    items: Iterable[tuple[int, str | None, str | None, int, bool]] = executor.shard((
        (n, line, err, default_digits, numbered) for n, line, err in _input_lines(stdin)
        if err is not None or (line is not None and line.strip())), which)
    worst = EXIT_OK
    count = bad = 0

    def emit(results: Iterable[tuple[dict[str, Any], int]]) -> None:
        nonlocal worst, count, bad
        for out, status in results:
            count += 1
            bad += status != EXIT_OK
            worst = max(worst, status)
            stdout.write(json.dumps(out) + "\n")
            stdout.flush()
            progress.tick(f"{count} lines answered")

    with progress.task("batch"), executor.open_executor(spec) as ex:
        # in input order, as each is known; chunks spare light lines a round trip each
        emit(executor.map_ordered(_answer_line, items, ex, chunk_size=_CHUNK[spec.kind],
                                  on_wait=lambda: progress.tick(f"{count} lines answered")))
    if sys.stderr.isatty() or count > 100 or bad:
        print(f"exactdp batch: {count} queries, {bad} failed", file=sys.stderr)
    return worst

"""JSON-lines result files of the benchmarks: rows appended as they finish, so a run can resume."""

from __future__ import annotations

import json
from pathlib import Path

from spectral_leverage.metrics import score_accuracy
from spectral_leverage.validation.grid import is_ok


def read_rows(path: Path | None) -> list[dict]:
    """The rows of ``path`` (none when it is None or absent)."""
    if path is None or not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append_row(path: Path | None, row: dict) -> None:
    """Print ``row`` as a JSON line and append it to ``path`` (when given)."""
    line = json.dumps(row)
    print(line, flush=True)
    if path is not None:
        with path.open("a") as f:
            f.write(line + "\n")


def parse_run_args(parser, summarise) -> object | None:
    """``parser``'s arguments with ``--out FILE`` (rows appended) and ``--summarise FILE`` added;
    None after printing ``summarise(rows of FILE)`` when ``--summarise`` was given."""
    parser.add_argument("--out", type=Path, help="append finished rows here; skip those already there")
    parser.add_argument("--summarise", type=Path, help="print the table of these rows and stop")
    args = parser.parse_args()
    if args.summarise:
        summarise(read_rows(args.summarise))
        return None
    return args


def accuracy_fields(scores, exact) -> dict:
    """R-ACC's 5th/95th percentiles and effective-dimension ratio of ``scores`` against ``exact``
    (to 3 places), and whether they lie within the validation's band (``validation.grid.is_ok``)."""
    accuracy = score_accuracy(scores, exact)
    return {"p05": round(accuracy["p05"], 3), "p95": round(accuracy["p95"], 3),
            "d_eff_ratio": round(accuracy["scale"], 3), "ok": is_ok(accuracy)}

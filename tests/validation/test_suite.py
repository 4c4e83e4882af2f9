"""The whole validation run (spectral_leverage.validation.run_validation) on tiny sizes, in process."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from validation_problems import TINY, one_blas_thread, table_csv  # noqa: F401 (fixtures are used by name)

from spectral_leverage.validation import FIGURES, QUICK, run_validation
from spectral_leverage.validation.report import to_json

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_run_validation_writes_report_figures_and_results(tmp_path, table_csv):
    out = tmp_path / "report"
    results = run_validation(out, quick=True, data=[table_csv], random_state=11, config=TINY)
    assert set(TINY) == set(QUICK)
    assert [d["n_used"] for d in results["accuracy"]["settings"]["datasets"]] == [300, 300, 300]
    pngs = sorted(out.glob("*.png"))
    assert [p.name for p in pngs] == sorted(f"{name}.png" for name in FIGURES)
    assert list(results["figures"]) == list(FIGURES)
    report = (out / "report.md").read_text()
    for png in pngs:
        assert f"]({png.name})" in report
        head = png.read_bytes()[:8]
        assert head == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert sorted(results["figures"].values()) == [p.name for p in pngs]
    stored = json.loads((out / "results.json").read_text())
    assert stored == to_json(results)
    meta = stored["meta"]
    assert meta["random_state"] == 11 and meta["quick"] is True and meta["config"]["max_exact"] == 300
    assert meta["blas_threads"] == 1 and "BLAS threads 1" in (out / "report.md").read_text()
    assert meta["machine"]["versions"]["numpy"] == np.__version__ and meta["wall_seconds"] > 0
    assert [d["name"] for d in stored["accuracy"]["settings"]["datasets"]] == ["bimodal-3d", "sparse-mode-3d",
                                                                               "toy"]
    assert "**Subsampled**: 300 of 500 rows" in report
    for row in stored["accuracy"]["summary"]:
        assert f"| {row['sampler']} |" in report


def test_run_validation_checks_config_and_matplotlib(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown config keys"):
        run_validation(tmp_path, quick=True, config={"sizes": (10,)})
    with pytest.raises(ValueError, match="blas_threads"):
        run_validation(tmp_path, quick=True, config=TINY, blas_threads=0)
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r'pip install "spectral_leverage\[validate\]"'):
        run_validation(tmp_path / "never", quick=True, config=TINY)
    assert not (tmp_path / "never").exists()


_NUMBER_WORDS = {word: number
                 for number, word in enumerate("one two three four five six seven eight nine ten".split(), 1)}


def stated_figure_counts(text: str) -> list[int]:
    """Every count of "<number> PNG figures" in ``text`` (a word or digits; line breaks allowed)."""
    words = re.findall(r"\b(\w+)\s+PNG\s+figures\b", text)
    return [int(w) if w.isdigit() else _NUMBER_WORDS.get(w.lower(), -1) for w in words]


def test_the_docs_count_the_figures_the_suite_writes():
    assert stated_figure_counts("writes four PNG\n figures, 12 PNG figures") == [4, 12]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert stated_figure_counts(readme), "README.md no longer states how many PNG figures a run writes"
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    wrong = {page.name: counts for page in pages
             if (counts := stated_figure_counts(page.read_text(encoding="utf-8")))
             and set(counts) != {len(FIGURES)}}
    assert not wrong, f"the suite writes {len(FIGURES)} figures ({', '.join(FIGURES)})"
    validation_page = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    assert all(f"`{name}.png`" in validation_page for name in FIGURES)

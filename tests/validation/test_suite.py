"""The whole validation run (spectral_leverage.validation.run_validation) on tiny sizes, in process."""

import json

import numpy as np
import pytest
from validation_problems import TINY, one_blas_thread, table_csv  # noqa: F401 (fixtures are used by name)

from spectral_leverage.validation import QUICK, run_validation
from spectral_leverage.validation.report import to_json

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_run_validation_writes_report_figures_and_results(tmp_path, table_csv):
    out = tmp_path / "report"
    results = run_validation(out, quick=True, data=[table_csv], random_state=11, config=TINY)
    assert set(TINY) == set(QUICK)
    assert [d["n_used"] for d in results["accuracy"]["settings"]["datasets"]] == [300, 300, 300]
    pngs = sorted(out.glob("*.png"))
    assert len(pngs) >= 3
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

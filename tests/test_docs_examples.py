"""Every Python snippet of the Examples pages (docs/examples/*.md) runs: the blocks of a page in
order, in one namespace, as a reader would paste them. A block that imports an optional library
(torch, gpytorch: the [interop] extra) that is not installed skips the rest of its page."""

import importlib
import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
PAGES = sorted(EXAMPLES.glob("*.md"))
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
_IMPORT = re.compile(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", re.MULTILINE)


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def snippets(page: Path) -> list[str]:
    return _BLOCK.findall(page.read_text(encoding="utf-8"))


def test_the_examples_pages_have_snippets():
    assert {page.name for page in PAGES} >= {"index.md", "hand-offs.md", "scores-map.md"}
    assert len(snippets(EXAMPLES / "hand-offs.md")) >= 5


@pytest.mark.parametrize("page", [p for p in PAGES if snippets(p)], ids=lambda p: p.name)
def test_every_snippet_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"docs_example_{page.stem}"}
    for number, code in enumerate(snippets(page), start=1):
        missing = [m for m in _IMPORT.findall(code) if not _importable(m)]
        if missing:
            pytest.skip(f"{page.name} block {number} needs {missing} (not installed)")
        exec(compile(code, f"{page.name}, block {number}", "exec"), namespace)


#: Falkon's install command from its own install page (Falkon is not on PyPI).
FALKON_INSTALL = "pip install --no-build-isolation git+https://github.com/FalkonML/falkon.git"


@pytest.mark.parametrize("page", ["README.md", "docs/examples/hand-offs.md", "docs/api/interop.md"])
def test_the_pages_that_hand_off_to_falkon_say_how_to_install_it(page):
    raw = (EXAMPLES.parents[1] / page).read_text(encoding="utf-8")
    assert FALKON_INSTALL in raw  # on one line: copied from the page, it runs
    text = " ".join(raw.split())
    assert "LeverageCenterSelector" in text
    assert "not on PyPI" in text and "PyTorch first" in text
    assert "needs torch, not Falkon" in text or "needs only torch" in text


def test_the_dask_example_runs_the_default_and_shows_dasks_progress(capsys):
    """docs/scaling.md's complete example, on 40 000 rows in chunks of 10 000 (2 000 000 in chunks
    of 250 000 on the page), as a script: its own LocalCluster of two worker processes, the default
    scores (the path they take in memory), the centres they draw, and Dask's text progress bar."""
    pytest.importorskip("distributed")
    page = EXAMPLES.parent / "scaling.md"
    code = snippets(page)[0]
    assert code.count("n = 2_000_000") == 1 and code.count("250_000") == 2
    code = code.replace("n = 2_000_000", "n = 40_000").replace("250_000", "10_000")
    namespace = {"__name__": "__main__"}
    exec(compile(code, f"{page.name}, block 1", "exec"), namespace)
    assert "100% Completed" in capsys.readouterr().out  # progress(y_hat)
    sl, model, mse = namespace["sl"], namespace["model"], namespace["mse"]
    assert sl.algorithm_ in ("density", "full-scale") and len(namespace["centres"]) == 500
    assert model.centers_.shape[1] == 3 and 0 < mse < 0.05  # noise variance 0.01

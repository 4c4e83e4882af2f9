"""The documentation site works offline: MathJax is served with it (docs/_ext/offline_math.py) and
no page loads a script from outside the site. Needs the [docs] extra (skips without it); CI's
``mkdocs build --strict`` runs the same check in the hook on every build."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mkdocs")
pytest.importorskip("mathjax")


def _hook():
    spec = importlib.util.spec_from_file_location("offline_math", ROOT / "docs" / "_ext" / "offline_math.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_check_sees_external_scripts():
    hook = _hook()
    page = ('<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>'
            "<script src='//example.org/a.js' defer></script><script src=\"js/local.js\"></script>"
            '<script>var u = "https://not-a-src.org";</script><a href="https://example.org">a link</a>')
    assert hook.external_scripts(page) == ["https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js",
                                           "//example.org/a.js"]
    assert (hook.mathjax_root() / "es5" / "tex-mml-chtml.js").is_file()


@pytest.mark.slow
def test_the_built_site_renders_math_offline(tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                   cwd=ROOT, check=True, capture_output=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    hook = _hook()
    pages = list(site.rglob("*.html"))
    assert len(pages) > 20
    found = {str(p): hook.external_scripts(p.read_text()) for p in pages}
    assert not {page: urls for page, urls in found.items() if urls}
    theory = (site / "theory" / "index.html").read_text()
    assert 'class="arithmatex"' in theory and "js/mathjax/es5/tex-mml-chtml.js" in theory
    assert "MathJax" in (site / "js" / "mathjax" / "es5" / "tex-mml-chtml.js").read_text()[:20000]
    fonts = list((site / "js" / "mathjax" / "es5" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert len(fonts) >= 20
    assert "fonts.googleapis.com" not in theory

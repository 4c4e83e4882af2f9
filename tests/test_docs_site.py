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


def _hook(name: str = "offline_math"):
    """The build hook ``docs/_ext/<name>.py`` as a module."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built once as CI builds it (strict: the hooks' checks are errors)."""
    site = tmp_path_factory.mktemp("docs") / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                   cwd=ROOT, check=True, capture_output=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    return site


def test_the_check_sees_external_scripts():
    hook = _hook()
    page = ('<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>'
            "<script src='//example.org/a.js' defer></script><script src=\"js/local.js\"></script>"
            '<script>var u = "https://not-a-src.org";</script><a href="https://example.org">a link</a>')
    assert hook.external_scripts(page) == ["https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js",
                                           "//example.org/a.js"]
    assert (hook.mathjax_root() / "es5" / "tex-mml-chtml.js").is_file()


@pytest.mark.slow
def test_the_built_site_renders_math_offline(site):
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


def test_the_404_check_sees_links_that_break_at_depth(tmp_path):
    hook = _hook("not_found_page")
    for name in ("assets/main.css", "js/app.js", "api/index.html", "index.html"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    page = ('<link rel="stylesheet" href="assets/main.css"><script src="js/app.js"></script>'
            '<a href="api/">API</a><a href="/.">home</a><a href="/api/#x">API</a><a href="#top">top</a>'
            '<a href="https://example.org/">out</a><img src="data:image/png;base64,AAAA">')
    assert hook.broken_links(page, tmp_path, "/") == []  # relative links work at the root only
    assert hook.broken_links(page, tmp_path, "/api/missing/") == ["assets/main.css", "js/app.js", "api/"]
    absolute = page.replace('"assets/', '"/assets/').replace('"js/', '"/js/').replace('"api/"', '"/api/"')
    assert hook.broken_links(absolute, tmp_path, "/api/missing/") == []
    # under a sub-path (site_url https://example.org/docs/) links from the host's root break
    assert hook.base_path("https://example.org/docs") == "/docs/" and hook.base_path(None) == "/"
    assert hook.broken_links(absolute, tmp_path, "/docs/api/missing/", "/docs/") == [
        "/assets/main.css", "/js/app.js", "/api/", "/.", "/api/#x"]
    under_docs = absolute.replace('"/', '"/docs/')
    assert hook.broken_links(under_docs, tmp_path, "/docs/api/missing/", "/docs/") == []


@pytest.mark.slow
def test_the_built_404_page_works_at_any_depth(site):
    hook = _hook("not_found_page")
    page = (site / "404.html").read_text(encoding="utf-8")
    for shown_at in ("/", "/api/", "/api/missing/", "/notes/missing/deeper/"):
        assert hook.broken_links(page, site, shown_at) == [], shown_at
    assert 'href="/assets/stylesheets/main.' in page and 'src="/js/mathjax/es5/tex-mml-chtml.js"' in page
    assert 'href="/api/interop/"' in page  # the navigation

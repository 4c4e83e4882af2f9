"""MkDocs hook: the site renders its mathematics offline.

MathJax 3 comes from the PyPI package ``django-static-mathjax`` (MathJax's own distribution files
as package data, no dependencies; the Django in its name is only where its files usually go). At
build time this hook adds to the site the combined ES5 component ``tex-mml-chtml.js``, the CHTML
web fonts it loads and the TeX extensions it may autoload, under ``js/mathjax/``, so the pages load
MathJax from the site itself. After the build it refuses (a strict-build error) any page with a
``<script src>`` outside the site: the site must work without network.
"""

from __future__ import annotations

import re
from importlib.resources import files as package_files
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

#: files and folders of MathJax's distribution (relative to its root) copied to js/mathjax/
ASSETS = ("es5/tex-mml-chtml.js", "es5/output/chtml/fonts/woff-v2", "es5/input/tex/extensions", "LICENSE")
TARGET = "js/mathjax"
_EXTERNAL_SCRIPT = re.compile(r"""<script\b[^>]*\bsrc\s*=\s*["']?((?:[a-z][a-z0-9+.-]*:)?//[^"'\s>]+)""",
                              re.IGNORECASE)


def mathjax_root() -> Path:
    """Root of MathJax's distribution in the installed ``django-static-mathjax``."""
    return Path(str(package_files("mathjax"))) / "static" / "mathjax"


def external_scripts(html: str) -> list[str]:
    """URLs of the ``<script src>`` of ``html`` that point outside the site (scheme or ``//``)."""
    return _EXTERNAL_SCRIPT.findall(html)


def on_files(files, config):
    root = mathjax_root()
    for asset in ASSETS:
        path = root / asset
        for source in sorted(path.rglob("*") if path.is_dir() else [path]):
            if source.is_file():
                uri = f"{TARGET}/{source.relative_to(root).as_posix()}"
                files.append(File.generated(config, uri, abs_src_path=str(source)))
    return files


def on_post_build(config):
    found = {}
    for page in Path(config["site_dir"]).rglob("*.html"):
        urls = external_scripts(page.read_text(encoding="utf-8"))
        if urls:
            found[str(page.relative_to(config["site_dir"]))] = urls
    if found:
        raise PluginError(f"pages load scripts from outside the site (the docs must work offline): {found}")

"""MkDocs hook: the 404 page works at any depth.

A server shows ``404.html`` at the URL that was missing (``/api/missing/``), so its stylesheets,
scripts and navigation links must not be relative to where ``404.html`` sits. MkDocs writes them
as absolute paths under the path of ``site_url``, ``/`` while it is unset (the site served from
a host's root, as ``mkdocs serve`` does); to host the site under a sub-path, set ``site_url`` to its
address. After the build this hook refuses (a strict-build error) a ``404.html`` with a link that,
shown at a nested URL, names no file of the site.
"""

from __future__ import annotations

import posixpath
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from mkdocs.exceptions import PluginError

#: where the check shows the page, below the site's base path: a missing page two levels down
NESTED = "api/missing/page/"


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.links += [value for name, value in attrs if name in ("href", "src") and value]


def base_path(site_url: str | None) -> str:
    """The URL path the site is served under: ``site_url``'s path, ``/`` when it is unset."""
    path = urlsplit(site_url or "/").path or "/"
    return path if path.endswith("/") else path + "/"


def broken_links(html: str, site_dir, shown_at: str, base: str = "/") -> list[str]:
    """The ``href``/``src`` links of ``html`` that, on the page shown at the URL path ``shown_at``,
    name no file of ``site_dir`` served under ``base`` (a folder stands for its ``index.html``).
    Links to other hosts, ``data:`` and the like, and fragments of the page itself are left alone.

    Examples
    --------
    >>> page = '<link href="/assets/main.css"><script src="assets/main.js"></script><a href="#top">'
    >>> import tempfile; site = Path(tempfile.mkdtemp()); (site / "assets").mkdir()
    >>> for name in ("main.css", "main.js"):
    ...     _ = (site / "assets" / name).write_text("")
    >>> broken_links(page, site, "/"), broken_links(page, site, "/api/missing/")
    ([], ['assets/main.js'])
    """
    parser = _Links()
    parser.feed(html)
    broken = []
    for link in parser.links:
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or not parts.path:
            continue
        path = posixpath.normpath(urlsplit(urljoin(shown_at, link)).path)
        target = Path(site_dir, path[len(base):]) if (path + "/").startswith(base) else None
        if target is None or not (target.is_file() or (target / "index.html").is_file()):
            broken.append(link)
    return broken


def on_post_build(config):
    page = Path(config["site_dir"]) / "404.html"
    if not page.is_file():
        return
    base = base_path(config.get("site_url"))
    broken = broken_links(page.read_text(encoding="utf-8"), config["site_dir"], base + NESTED, base)
    if broken:
        raise PluginError(f"404.html, shown at {base + NESTED}, has links to no file of the site "
                          f"(relative links? set site_url to the site's address): {broken}")

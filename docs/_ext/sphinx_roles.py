"""Griffe extension used by the documentation build only.

The package's docstrings are numpy-style with Sphinx/reST inline markup (``:math:`...```,
``.. math::`` blocks, ``:class:`~pkg.Name```, ...). mkdocstrings renders Markdown, so before the
numpy parser runs this extension rewrites that markup in every docstring:

* ``:math:`x``` becomes ``\\(x\\)`` and a ``.. math::`` block becomes a ``$$ ... $$`` block, both
  rendered by ``pymdownx.arithmatex`` (generic mode) and MathJax;
* ``:class:``, ``:func:``, ``:meth:``, ``:mod:``, ``:data:``, ``:attr:``, ``:exc:``, ``:obj:``
  roles become code spans (a leading ``~`` keeps only the last dotted component, as in Sphinx).

The source files are not modified.
"""

from __future__ import annotations

import re

import griffe

_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_XREF_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")
_MATH_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<rest>.*)$")


def _xref(match: re.Match) -> str:
    tilde, target = match.group(1), match.group(2).strip()
    if tilde:
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def _math_blocks(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _MATH_DIRECTIVE.match(lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        indent = match.group("indent")
        body = [match.group("rest")] if match.group("rest").strip() else []
        i += 1
        while i < len(lines):
            line = lines[i]
            if line.strip() and (len(line) - len(line.lstrip())) <= len(indent):
                break
            body.append(line.strip())
            i += 1
        while body and not body[-1]:
            body.pop()
        while body and not body[0]:
            body.pop(0)
        out.append(f"{indent}$$")
        out.extend(f"{indent}{line}" if line else "" for line in body)
        out.append(f"{indent}$$")
        out.append("")
    return "\n".join(out)


def rewrite(text: str) -> str:
    """Sphinx/reST inline markup of one docstring → Markdown + arithmatex."""
    text = _math_blocks(text)
    text = _MATH_ROLE.sub(lambda m: "\\(" + m.group(1) + "\\)", text)
    return _XREF_ROLE.sub(_xref, text)


class SphinxRoles(griffe.Extension):
    """Rewrite reST roles and math directives in docstrings before they are parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)

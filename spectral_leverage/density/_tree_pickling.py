"""Pickling of estimators that hold a pykdtree ``KDTree`` (which does not pickle)."""

from __future__ import annotations


class _RebuildsTree:
    """Pickling for estimators holding a pykdtree ``KDTree`` in ``_tree`` (which does not pickle):
    the tree is dropped and rebuilt by ``_rebuild_tree`` on unpickling (e.g. on a Dask worker)."""

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns __dict__ itself
        state["_tree"] = None
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._rebuild_tree()

"""What the usearch and bm25s indexes share: a file derived from the catalog, stamped with its state."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vectrixdb.store.catalog import State

log = logging.getLogger("vectrixdb")


class Derived:
    """A derived index: `load(state)` uses the saved file only when its stamp is exactly `state` and
    its checksums hold (`_read` says why not), else the caller rebuilds it from the catalog."""

    state: State | None = None  # the catalog state the index in memory reflects

    @property
    def where(self) -> str:  # each index names itself (its folder), for the log
        return type(self).__name__

    @property
    def generation(self) -> int:
        return self.state.generation if self.state else -1

    def load(self, state) -> bool:
        """Load the saved file if it is stamped with `state` and intact; False (and why, logged) if not.

        A writer in another process may replace the files while they are read (its stamp then
        changes): a read that finds a fault is tried again, up to three times, when the stamp moved
        meanwhile, so a swap is never taken for damage (nor logged as such)."""
        for _ in range(3):
            before = self._stamp_bytes()
            problem = self._read(state)
            if not problem or problem.startswith("behind") or self._stamp_bytes() == before:
                break
        if problem:
            log.log(logging.INFO if problem.startswith("behind") else logging.WARNING,
                    "%s: %s; rebuilding it from the catalog", self.where, problem)
            return False
        return True

    def _read(self, state) -> str | None:  # pragma: no cover - each index reads its own files
        raise NotImplementedError

    def _stamp_bytes(self) -> bytes | None:  # pragma: no cover - each index names its stamp
        raise NotImplementedError

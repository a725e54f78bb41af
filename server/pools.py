"""Where checked races get their deals: the pools of deals the solver proved winnable.

By default the pools shipped in ``shared/data`` (public: they come with every
client). An operator who wants checked races that no racer can look up keeps
private pool files (written by ``thieves pool build``) in ``--pool-dir``;
they are read once at start, so a malformed file stops the server with its
reason instead of failing a race later.
"""

from __future__ import annotations

import random
from pathlib import Path

from shared import pool as shared_pool
from shared.pool import Pool, PoolError, parse_pool


class DealPools:
    """Winnable deal numbers per variant key, and a secret pick among them."""

    def __init__(self, pool_dir: str = "", rng: random.Random | None = None) -> None:
        self.private: dict[str, Pool] | None = None
        if pool_dir:
            self.private = {}
            directory = Path(pool_dir)
            if not directory.is_dir():
                raise PoolError(f"--pool-dir {pool_dir!r} is not a directory")
            for path in sorted(directory.glob("pool-*.json")):
                try:
                    pool = parse_pool(path.read_text(encoding="utf-8"))
                except (PoolError, OSError, ValueError) as exc:
                    raise PoolError(f"{path}: {exc}") from None
                self.private[pool.variant] = pool
        self.rng = rng or random.SystemRandom()
        """SystemRandom: the pick is as secret as a random deal number."""

    @property
    def source(self) -> str:
        return "shipped with the package (public)" if self.private is None else "private --pool-dir"

    def deals(self, variant: str) -> tuple[int, ...]:
        if self.private is None:
            return shared_pool.pool_deals(variant)
        pool = self.private.get(variant)
        return pool.deals if pool is not None else ()

    def pick(self, variant: str) -> int | None:
        """A secret winnable deal of ``variant``; ``None`` when its pool is empty."""
        deals = self.deals(variant)
        return self.rng.choice(deals) if deals else None

"""Types of the compiled search (``_fastsearch.c``); ``fast.py`` is its only caller and says what each means."""

from typing import Callable

def search(*, strategy: int, cols: list[bytes], stock: bytes, si: int, waste: bytes, pass_no: int, home: bytes,
           packs: int, parents: list[bytes], needs: list[bytes], empty_any: bool,
           empty_kings: bool, group: int, draw: int, passes: int, total: int, max_waste: int, prune_dead: bool,
           check: Callable[[int, int, int], str | None]) -> tuple[int, list[tuple[int, int, int]], int, int, int,
                                                                str | None]: ...

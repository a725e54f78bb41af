"""Single keys read while a plain (non-textual) command waits: ``thieves challenge`` waiting for the
answer (q cancels) and ``thieves challenges --wait`` once a challenge arrives (a accepts, d declines).

On a terminal, the reader puts it in cbreak mode (keys come one by one, unechoed; Ctrl-C still
interrupts) and restores it on leaving; without a terminal (a pipe, a script) no key ever comes and
:meth:`KeyReader.wait` just sleeps, so those commands behave as before for programs.
"""

from __future__ import annotations

import os
import select
import sys
import time
from types import TracebackType
from typing import Any


class KeyReader:
    """``with KeyReader() as keys: keys.wait(1.0)`` -> the key pressed within that second, or None."""

    def __init__(self) -> None:
        self.tty = sys.stdin.isatty()
        self._saved: Any = None

    def __enter__(self) -> "KeyReader":
        if self.tty:
            import termios
            import tty

            self._saved = termios.tcgetattr(sys.stdin.fileno())
            tty.setcbreak(sys.stdin.fileno())
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._saved is not None:
            import termios

            try:
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self._saved)
            except (OSError, termios.error):  # the terminal is gone (closed window): nothing to restore
                pass

    def wait(self, seconds: float | None) -> str | None:
        """Wait up to ``seconds`` (None: until one comes) for a key; the key, or None when none came (or
        there is no terminal: then ``None`` waits for nothing)."""
        if not self.tty:
            if seconds is not None:
                time.sleep(seconds)
            return None
        try:
            ready, _, _ = select.select([sys.stdin], [], [], seconds)
            data = os.read(sys.stdin.fileno(), 32) if ready else None
        except OSError as exc:  # EIO: the terminal was closed under us
            raise EOFError("the terminal closed") from exc
        if data is None:
            return None
        if not data:  # end of input: the terminal is gone
            raise EOFError("the terminal closed")
        return data.decode(errors="replace")[:1]

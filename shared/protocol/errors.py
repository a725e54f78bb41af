"""Refusals."""

from __future__ import annotations

from .codes import ErrorCode


class CodedError(Exception):
    """An error a client is told about: an :class:`ErrorCode` and a message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        self.code = code
        super().__init__(message)


class ProtocolError(CodedError, ValueError):
    """A frame that cannot be accepted; ``code`` is an :class:`ErrorCode`."""

    def __init__(self, code: ErrorCode, message: str, ref: str | None = None) -> None:
        super().__init__(code, message)
        self.ref = ref

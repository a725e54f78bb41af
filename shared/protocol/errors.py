"""Refusals: one exception tree for everything a client is refused, whichever layer refuses it.

Why one root: a refusal is found deep down (a Lua script, a limit, a name check, a token) and answered
at the edge, as an ``error`` frame on a WebSocket or a JSON error body over HTTP. With one root
carrying what both answers need (the code, the player's sentence, the HTTP status, when to come back),
every layer raises what it found and each edge maps it once (``server/answers.py`` for HTTP, the
connection's ``failed`` for frames), the way Starlette's ``HTTPException`` is raised by a handler and
answered by the app. Subclasses add what their callers read (a close code, a wait), never a new root.
"""

from __future__ import annotations

from .codes import HTTP_STATUS, CloseCode, ErrorCode, explain


class Refusal(Exception):
    """A refused request or frame: ``code`` (an :class:`ErrorCode`, or a move reason or store word as
    given), ``message`` in the player's words (the code's explanation unless told), ``status`` for HTTP
    (the code's usual one, :data:`HTTP_STATUS`, unless told) and ``retry_after`` (seconds, sent as
    ``Retry-After``) when coming back later can succeed."""

    close: CloseCode | None = None
    """A WebSocket close code to end the connection with after the error frame (``Refused`` sets it)."""

    def __init__(self, code: ErrorCode | str, message: str | None = None, *, status: int | None = None,
                 retry_after: int | None = None) -> None:
        self.code: ErrorCode | str = code
        self.message = message or explain(self.value)
        self.status = status if status is not None else http_status(self.value)
        self.retry_after = retry_after
        super().__init__(self.message)

    @property
    def value(self) -> str:
        """The code as the wire writes it."""
        return self.code.value if isinstance(self.code, ErrorCode) else str(self.code)

    def body(self) -> dict[str, str]:
        """The JSON error body docs/protocol.md documents: ``{"code", "message"}``."""
        return {"code": self.value, "message": self.message}


def http_status(code: str) -> int:
    """The HTTP status a refusal with ``code`` is answered with by default (400 for a code without one)."""
    try:
        return HTTP_STATUS.get(ErrorCode(code), 400)
    except ValueError:
        return 400


class CodedError(Refusal):
    """A refusal whose code is always an :class:`ErrorCode` (read as such by its callers)."""

    code: ErrorCode

    def __init__(self, code: ErrorCode, message: str | None = None, *, status: int | None = None,
                 retry_after: int | None = None) -> None:
        super().__init__(code, message, status=status, retry_after=retry_after)


class ProtocolError(CodedError, ValueError):
    """A frame or body that cannot be accepted (``bad_frame``, ``unknown_type``, ``bad_field``); ``ref``
    names the frame's type when it had one."""

    def __init__(self, code: ErrorCode, message: str, ref: str | None = None) -> None:
        super().__init__(code, message)
        self.ref = ref

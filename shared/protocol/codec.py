"""The codec: frames to bytes and back (msgpack), HTTP bodies from JSON, each validated while it is
parsed, with the nesting checked before (see :func:`_too_deep`)."""

from __future__ import annotations

import enum
import re
from typing import TypeVar

import msgspec

from .codes import ErrorCode, explain
from .errors import ProtocolError
from .fields import MAX_NESTING
from .race import CLIENT_TYPES, SERVER_TYPES, ClientMessage, Error, ServerMessage


_encoder = msgspec.msgpack.Encoder()
_Decoded = TypeVar("_Decoded")
_client_decoder: msgspec.msgpack.Decoder[ClientMessage] = msgspec.msgpack.Decoder(ClientMessage)
_server_decoder: msgspec.msgpack.Decoder[ServerMessage] = msgspec.msgpack.Decoder(ServerMessage)
_any_decoder = msgspec.msgpack.Decoder()


def encode(message: msgspec.Struct) -> bytes:
    """One message as the bytes of one binary WebSocket frame."""
    return _encoder.encode(message)


def decode_client(data: bytes) -> ClientMessage:
    """A frame from a client, validated; raises :class:`ProtocolError`."""
    return _decode(_client_decoder, data, CLIENT_TYPES)


def decode_server(data: bytes) -> ServerMessage:
    """A frame from the server (the client's side); raises :class:`ProtocolError`."""
    return _decode(_server_decoder, data, SERVER_TYPES)


def _decode(decoder: msgspec.msgpack.Decoder[_Decoded], data: bytes, types: tuple[str, ...]) -> _Decoded:
    if _too_deep(data, MAX_NESTING):
        raise ProtocolError(ErrorCode.BAD_FRAME, f"msgpack nested deeper than {MAX_NESTING} levels")
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise _classify(data, types, str(exc)) from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"not msgpack: {exc}") from None


_T = TypeVar("_T")
_JSON_SKIP = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]')
"""A JSON string (skipped whole, so brackets inside it do not count; an unterminated one runs to the
end) or one bracket."""


def decode_json(data: bytes, into: type[_T]) -> _T:
    """An HTTP body as ``into`` (an empty body is ``{}``); raises :class:`ProtocolError`: ``bad_frame``
    for a body that is not JSON or nests deeper than :data:`MAX_NESTING`, ``bad_field`` for one of
    the wrong shape (``ref`` is None: an HTTP body is not a frame with a type)."""
    data = data or b"{}"
    if _json_too_deep(data, MAX_NESTING):
        raise ProtocolError(ErrorCode.BAD_FRAME, f"the body nests JSON deeper than {MAX_NESTING} levels")
    try:
        return msgspec.json.decode(data, type=into)
    except msgspec.ValidationError as exc:
        raise ProtocolError(ErrorCode.BAD_FIELD, str(exc)) from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"the body is not JSON: {exc}") from None


def _json_too_deep(data: bytes, limit: int) -> bool:
    """Whether JSON ``data`` nests arrays and objects more than ``limit`` deep (why not let the
    decoder find out: as for msgpack, :func:`_too_deep`). A body with few brackets is passed by two
    C-speed counts; the others are walked by one regular expression that skips strings whole.
    Malformed data is left to the decoder."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    depth = 0
    for match in _JSON_SKIP.finditer(data):
        head = match.group()[0]
        if head in b"[{":
            depth += 1
            if depth > limit:
                return True
        elif head in b"]}":
            depth -= 1
    return False


_CONTAINER_HEADS = bytes([*range(0x80, 0xA0), 0xDC, 0xDD, 0xDE, 0xDF])
_NOT_CONTAINER_HEADS = bytes(b for b in range(256) if b not in _CONTAINER_HEADS)
_FIXED_SIZE = {0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
               0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17}
"""Payload bytes after the head byte of msgpack values of fixed size (fixext: type byte included)."""
_SIZED = {0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1),
          0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0)}
"""bin, ext and str with a length field: (bytes of the length, extra bytes: the ext type)."""
_COUNTED = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}
"""array16/32 and map16/32: (bytes of the count, values per entry)."""


def _too_deep(data: bytes, limit: int) -> bool:
    """Whether msgpack ``data`` nests arrays and maps more than ``limit`` deep.

    Why not let the decoder find out: msgspec recurses once per level, so a
    deep frame raises ``RecursionError`` (at a depth that depends on the
    caller's stack) instead of a decode error. Nesting needs one container
    head byte per level, so a frame with few bytes that could be one (every
    real frame) is passed by one C-speed ``translate``; the others are walked
    without recursion. Malformed or truncated data is left to the decoder.
    """
    if len(data.translate(None, _NOT_CONTAINER_HEADS)) <= limit:
        return False
    left = [1]  # values still to read in each open container, outermost first
    i, end = 0, len(data)
    while left and i < end:
        if left[-1] == 0:
            left.pop()
            continue
        left[-1] -= 1
        head = data[i]
        i += 1
        if head <= 0x7F or head >= 0xE0:  # fixints
            continue
        if head <= 0x9F:  # fixmap, fixarray
            left.append((head & 0x0F) * 2 if head <= 0x8F else head & 0x0F)
        elif head <= 0xBF:  # fixstr
            i += head & 0x1F
        elif head in _FIXED_SIZE:
            i += _FIXED_SIZE[head]
        elif head in _SIZED:
            width, extra = _SIZED[head]
            i += width + extra + int.from_bytes(data[i:i + width], "big")
        elif head in _COUNTED:
            width, per_entry = _COUNTED[head]
            left.append(int.from_bytes(data[i:i + width], "big") * per_entry)
            i += width
        else:  # 0xc1, never used
            return False
        if len(left) > limit + 1:
            return True
    return False


def _classify(data: bytes, types: tuple[str, ...], detail: str) -> ProtocolError:
    """Tell a frame of the wrong shape from an unknown type from a bad field (error path only)."""
    try:
        raw = _any_decoder.decode(data)
    except msgspec.DecodeError:
        return ProtocolError(ErrorCode.BAD_FRAME, "a frame is exactly one msgpack value")
    if not isinstance(raw, dict):
        return ProtocolError(ErrorCode.BAD_FRAME, f"a frame is a msgpack map, not {type(raw).__name__}")
    kind = raw.get("type")
    if not isinstance(kind, str):
        return ProtocolError(ErrorCode.BAD_FRAME, "a frame needs a string 'type' field")
    if kind not in types:
        return ProtocolError(
            ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}; known: {', '.join(types)}"
        )
    return ProtocolError(ErrorCode.BAD_FIELD, f"{kind}: {detail}", ref=kind)


def error(code: ErrorCode | str, message: str | None = None, ref: str | None = None) -> Error:
    """An ``error`` message with the standard explanation unless told otherwise."""
    value = code.value if isinstance(code, enum.Enum) else code
    return Error(code=value, message=message or explain(value), ref=ref)

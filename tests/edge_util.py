"""Raw HTTP/1.1 over real sockets for the edge tests: requests sent byte by byte as an attacker would,
answers read as they come, from any loopback address (the whole of 127.0.0.0/8 reaches a server on
127.0.0.1, so one machine plays many client addresses)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import websockets

from shared import protocol as p


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes = b""
    json: Any = field(default=None)

    @property
    def code(self) -> str | None:
        return self.json.get("code") if isinstance(self.json, dict) else None


class RawClient:
    """One TCP connection speaking HTTP/1.1 by hand."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, url: str, source: str = "127.0.0.1") -> "RawClient":
        parts = urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port, local_addr=(source, 0),
                                                       limit=1 << 20)
        return cls(reader, writer)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def answer(self, timeout: float = 30.0, body: bool = True) -> Answer:
        """The next answer's head (and its ``Content-Length`` body unless ``body`` is False: a stream)."""
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), timeout)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
        answer = Answer(status, headers)
        if (body or status >= 300) and "content-length" in headers:
            answer.body = await asyncio.wait_for(self.reader.readexactly(int(headers["content-length"])), timeout)
            if headers.get("content-type", "").startswith("application/json"):
                answer.json = json.loads(answer.body)
        return answer

    async def closed(self, timeout: float = 30.0) -> bool:
        """Wait for the server to close (True), discarding what it sends; False if it has not within
        ``timeout``."""
        try:
            async with asyncio.timeout(timeout):
                while await self.reader.read(65536):
                    pass
        except TimeoutError:
            return False
        except ConnectionError:
            pass
        return True

    async def request(self, method: str, path: str, headers: dict[str, str] | None = None,
                      body: bytes = b"") -> Answer:
        await self.send(head(method, path, headers, body) + body)
        return await self.answer()

    def close(self) -> None:
        self.writer.close()


def head(method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "host: test"]
    if body:
        lines.append(f"content-length: {len(body)}")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def spectate(ws_url: str, race: str, source: str = "127.0.0.1",
                   headers: dict[str, str] | None = None) -> tuple[str, websockets.ClientConnection | None]:
    """One WebSocket spectator: ``("welcome", ws)``, or ``("refused <code>", None)`` for either typed
    refusal (an ``error`` frame then close 4007, or an HTTP error answer at the handshake when the
    server answered before reading the request); anything else (a reset, a timeout) raises."""
    try:
        ws = await websockets.connect(ws_url, compression=None, open_timeout=30, local_addr=(source, 0),
                                      additional_headers=headers)
    except websockets.InvalidStatus as exc:
        return f"refused {json.loads(exc.response.body or b'{}')['code']}", None
    try:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, role="spectator")))
    except websockets.ConnectionClosed:
        pass  # refused at once: the error frame is already in (read below)
    msg = p.decode_server(await asyncio.wait_for(ws.recv(), 30))
    if isinstance(msg, p.Welcome):
        return "welcome", ws
    assert isinstance(msg, p.Error), msg
    try:
        await asyncio.wait_for(ws.recv(), 30)
    except websockets.ConnectionClosed:
        pass
    assert ws.close_code == p.CloseCode.SERVER_FULL, ws.close_code
    return f"refused {msg.code}", None

"""The race server's HTTP API, for the commands that need no live connection.

``thieves create`` and ``thieves list`` make one request each, so plain
blocking ``urllib`` is enough and adds no dependency. Bodies are JSON with
the field names of :mod:`shared.protocol` (``POST /races`` takes a
``Create``, answers a ``Created``; ``GET /races`` lists ``RaceInfo``).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import msgspec

from shared import protocol as p

DEFAULT_SERVER = "http://127.0.0.1:8000"
SERVER_ENV = "THIEVES_SERVER"
TIMEOUT = 10.0


class ApiError(Exception):
    """A request the server refused or could not answer; the message says why."""


SECURE_SCHEMES = {"https": True, "wss": True, "http": False, "ws": False}
"""The schemes a server address may carry: HTTP and WebSocket name the same server."""

EXAMPLE = "give host:port (e.g. 127.0.0.1:8000) or a URL (http://host[:port])"


class ServerAddressError(ValueError):
    """A server address no command can use; the message says what to type instead."""


def default_server() -> str:
    """``$THIEVES_SERVER`` or the local default."""
    return os.environ.get(SERVER_ENV) or DEFAULT_SERVER


def server_url(text: str) -> str:
    """The HTTP base URL (no trailing slash, no ``/ws``) of a server given as ``host:port`` or a URL.

    Every command reads ``--server`` through this one function, so ``play``,
    ``create`` and ``list`` accept the same spellings: ``host:port``,
    ``http[s]://host[:port][/prefix]`` and the WebSocket forms ``ws[s]://...[/ws]``.
    A bare word with no port is refused rather than guessed at: ``notaurl``
    is far more often a typo than a server on port 80.
    """
    raw = text.strip()
    if not raw:
        raise ServerAddressError(f"the server address is empty: {EXAMPLE}")
    scheme, sep, rest = raw.partition("://")
    if sep:
        scheme = scheme.lower()
        if scheme not in SECURE_SCHEMES:
            raise ServerAddressError(f"{scheme}:// is not a race server's scheme: {EXAMPLE}")
    else:
        scheme, rest = "", raw
    hostport, slash, path = rest.partition("/")
    path = ("/" + path).rstrip("/") if slash else ""
    if path.endswith("/ws"):
        path = path[: -len("/ws")]
    parts = urllib.parse.urlsplit("//" + hostport)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if not parts.hostname:
        raise ServerAddressError(f"{text!r} names no host: {EXAMPLE}")
    if port == -1 or port == 0 or (port is None and hostport.endswith(":")):
        raise ServerAddressError(f"{text!r}: the port must be a number from 1 to 65535")
    if not scheme and port is None:
        raise ServerAddressError(f"{text!r} is not a server address: {EXAMPLE}")
    secure = SECURE_SCHEMES.get(scheme, False)
    return f"{'https' if secure else 'http'}://{hostport}{path}"


def _request(server: str, method: str, path: str, body: bytes | None = None) -> Any:
    server = server_url(server)
    url = server + path
    req = urllib.request.Request(url, data=body, method=method)
    req.add_header("Accept", "application/json")
    if body is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            return json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise ApiError(f"{method} {url}: {exc.code} {_error_text(exc)}") from None
    except urllib.error.URLError as exc:
        raise ApiError(f"cannot reach the race server at {server}: {exc.reason}") from None
    except (TimeoutError, ConnectionError) as exc:
        raise ApiError(f"cannot reach the race server at {server}: {exc}") from None
    except json.JSONDecodeError:
        raise ApiError(f"{method} {url}: the answer is not JSON (is this a race server?)") from None


def _error_text(exc: urllib.error.HTTPError) -> str:
    """The server's ``{"code", "message"}`` body when it sent one, else the HTTP reason."""
    try:
        data = json.loads(exc.read())
    except (ValueError, OSError):
        return str(exc.reason)
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and "message" in err:
            from .wording import error_words

            return error_words(str(err.get("code", "")), str(err["message"]))
    return str(exc.reason)


def create_race(server: str, create: p.Create) -> p.Created:
    data = _request(server, "POST", "/races", msgspec.json.encode(create))
    try:
        return msgspec.convert(data, p.Created)
    except msgspec.ValidationError as exc:
        raise ApiError(f"unexpected answer to POST /races: {exc}") from None


def list_races(server: str) -> list[p.RaceInfo]:
    data = _request(server, "GET", "/races")
    if isinstance(data, dict):
        data = data.get("races", [])
    try:
        return msgspec.convert(data, list[p.RaceInfo])
    except msgspec.ValidationError as exc:
        raise ApiError(f"unexpected answer to GET /races: {exc}") from None


def get_json(server: str, path: str) -> Any:
    """``GET path`` on the server, its JSON (raises :class:`ApiError` with the server's own words)."""
    return _request(server, "GET", path)

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
import urllib.request
from typing import Any

import msgspec

from shared import protocol as p

DEFAULT_SERVER = "http://127.0.0.1:8000"
SERVER_ENV = "THIEVES_SERVER"
TIMEOUT = 10.0


class ApiError(Exception):
    """A request the server refused or could not answer; the message says why."""


def default_server() -> str:
    """``$THIEVES_SERVER`` or the local default."""
    return os.environ.get(SERVER_ENV) or DEFAULT_SERVER


def _request(server: str, method: str, path: str, body: bytes | None = None) -> Any:
    url = server.rstrip("/") + path
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
            return f"{err.get('code', '')}: {err['message']}".strip(": ")
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

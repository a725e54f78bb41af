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
from typing import Any, Iterator, TypeVar

import msgspec

from shared import protocol as p

T = TypeVar("T")

DEFAULT_SERVER = "http://127.0.0.1:8000"
SERVER_ENV = "THIEVES_SERVER"
TIMEOUT = 10.0


class ApiError(Exception):
    """A request the server refused or could not answer; the message says why.

    ``status`` is the HTTP status (``None`` when no answer came), ``code`` the
    server's error code when it sent one, ``retry_after`` its ``Retry-After``
    seconds: the account commands explain a refusal from these, never from
    the server's English.
    """

    def __init__(self, message: str, status: int | None = None, code: str | None = None,
                 retry_after: float | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.retry_after = retry_after
        self.reason = reason or message
        """The refusal in the player's words, without the method and URL."""

    def words(self) -> str:
        """What to tell the player: the server's reason when it gave a code (with when to try again),
        else the whole message (which server, what failed)."""
        if self.code is None:
            return str(self)
        from .wording import REQUEST_WORDED, account_words

        # Already the player's words (wording.error_words): the server's reason, or the client's sentence for
        # a code the server gave no words for, and what to do; a reason about the HTTP request itself is said
        # by its code instead.
        text = account_words(self.code, p.explain(self.code)) if self.code in REQUEST_WORDED else self.reason
        if self.retry_after is not None and "try again" not in text:
            text += f"; try again in {self.retry_after:g} s"
        return text


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


def _request(server: str, method: str, path: str, body: bytes | None = None, key: str | None = None) -> Any:
    """One request; ``key`` goes in ``Authorization: Bearer`` (the account endpoints)."""
    server = server_url(server)
    url = server + path
    req = urllib.request.Request(url, data=body, method=method)
    req.add_header("Accept", "application/json")
    if body is not None or method != "GET":
        req.add_header("Content-Type", "application/json")  # the server refuses any other (415), body or not
    if key is not None:
        req.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            return json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        code, text = _error_body(exc)
        raise ApiError(f"{method} {url}: {exc.code} {text}", exc.code, code, _retry_after(exc), text) from None
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise _unreachable(server, exc) from None
    except json.JSONDecodeError:
        raise ApiError(f"{method} {url}: the answer is not JSON (is this a race server?)") from None


def _unreachable(server: str, exc: BaseException) -> ApiError:
    """No answer at all: every request of every command says so in the same words."""
    from .wording import network_words, unreachable_words

    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    why = network_words(reason) if isinstance(reason, BaseException) else str(reason)
    return ApiError(unreachable_words(server, why))


def _error_body(exc: urllib.error.HTTPError) -> tuple[str | None, str]:
    """The server's error code and its text for the player (``{"code", "message"}``), else the HTTP reason."""
    try:
        data = json.loads(exc.read())
    except (ValueError, OSError):
        return None, str(exc.reason)
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and "message" in err:
            from .wording import error_words

            code = str(err.get("code", ""))
            return code or None, error_words(code, str(err["message"]))
    return None, str(exc.reason)


def _retry_after(exc: urllib.error.HTTPError) -> float | None:
    try:
        return float(exc.headers.get("Retry-After", ""))
    except (TypeError, ValueError):
        return None


def _typed(data: Any, kind: type[T], what: str) -> T:
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        raise ApiError(f"unexpected answer to {what}: {exc}") from None


def _quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def create_race(server: str, create: p.Create) -> p.Created:
    data = _request(server, "POST", "/races", msgspec.json.encode(create))
    try:
        return msgspec.convert(data, p.Created)
    except msgspec.ValidationError as exc:
        raise ApiError(f"unexpected answer to POST /races: {exc}") from None


def list_races(server: str, finished: bool = False) -> list[p.RaceInfo]:
    """``GET /races``: the races in the lobby and running, then (``finished``) the latest finished ones."""
    data = _request(server, "GET", "/races?finished=yes" if finished else "/races")
    if isinstance(data, dict):
        data = data.get("races", [])
    try:
        return msgspec.convert(data, list[p.RaceInfo])
    except msgspec.ValidationError as exc:
        raise ApiError(f"unexpected answer to GET /races: {exc}") from None


# ------------------------------------------------------------ accounts and history
def seek_pools(server: str) -> p.SeekPools:
    """``GET /seeks``: the seek pools and how many wait in each (a server without seeks: none)."""
    try:
        return _typed(_request(server, "GET", "/seeks"), p.SeekPools, "seek pools")
    except ApiError as exc:
        if exc.status == 404:
            return p.SeekPools(pools=[], server_time=0)
        raise


def register(server: str, name: str) -> p.AccountKeyAnswer:
    """``POST /players``: a new account; its key is in the answer and nowhere else."""
    data = _request(server, "POST", "/players", msgspec.json.encode(p.Register(name=name)))
    return _typed(data, p.AccountKeyAnswer, "POST /players")


def rotate_key(server: str, name: str, key: str) -> p.AccountKeyAnswer:
    """``POST /players/{name}/key``: a new key; the old one stops working at once."""
    data = _request(server, "POST", f"/players/{_quote(name)}/key", b"{}", key=key)
    return _typed(data, p.AccountKeyAnswer, "POST /players/{name}/key")


def check_key(server: str, name: str, key: str) -> p.KeyCheck:
    """``GET /players/{name}/key``: the account's registered name when ``key`` is its current key;
    raises :class:`ApiError` (``bad_key``, ``player_not_found``) otherwise. Changes nothing."""
    data = _request(server, "GET", f"/players/{_quote(name)}/key", key=key)
    return _typed(data, p.KeyCheck, "GET /players/{name}/key")


def profile(server: str, name: str) -> p.Profile:
    """``GET /players/{name}`` (any case of the name)."""
    return _typed(_request(server, "GET", f"/players/{_quote(name)}"), p.Profile, "GET /players/{name}")


def history(server: str, name: str, limit: int = 20, before: str | None = None) -> p.HistoryPage:
    """One page of ``GET /players/{name}/races``, newest first."""
    query = {"limit": str(limit)} | ({"before": before} if before else {})
    data = _request(server, "GET", f"/players/{_quote(name)}/races?{urllib.parse.urlencode(query)}")
    return _typed(data, p.HistoryPage, "GET /players/{name}/races")


def latest_races(server: str, name: str, count: int) -> list[p.HistoryEntry]:
    """The ``count`` newest races of an account, following ``next`` across pages of at most 100."""
    out: list[p.HistoryEntry] = []
    before: str | None = None
    while len(out) < count:
        page = history(server, name, min(100, count - len(out)), before)
        out.extend(page.races)
        if not page.next or not page.races:
            break
        before = page.next
    return out[:count]


def leaderboard(server: str, variant: str | None = None, limit: int = 50) -> p.Leaderboard:
    """``GET /leaderboard``: the rated players of a variant, best first."""
    query = {"limit": str(limit)} | ({"variant": variant} if variant else {})
    data = _request(server, "GET", f"/leaderboard?{urllib.parse.urlencode(query)}")
    return _typed(data, p.Leaderboard, "GET /leaderboard")


def results(server: str, race: str) -> p.Results:
    """``GET /races/{race}/results``: standings, the revealed deal and every game."""
    data = _request(server, "GET", f"/races/{_quote(race)}/results")
    return _typed(data, p.Results, "GET /races/{race}/results")


def get_json(server: str, path: str) -> Any:
    """``GET path`` on the server, its JSON (raises :class:`ApiError` with the server's own words)."""
    return _request(server, "GET", path)


# ------------------------------------------------------------------ events
def create_event(server: str, organiser_token: str, event: p.EventCreate) -> p.EventInfo:
    """``POST /events`` with the organiser's token."""
    data = _request(server, "POST", "/events", msgspec.json.encode(event), key=organiser_token)
    return _typed(data, p.EventInfo, "POST /events")


def list_events(server: str) -> list[p.EventInfo]:
    data = _request(server, "GET", "/events")
    return _typed(data.get("events", []) if isinstance(data, dict) else data, list[p.EventInfo], "GET /events")


def event(server: str, event_id: str) -> p.EventInfo:
    return _typed(_request(server, "GET", f"/events/{_quote(event_id)}"), p.EventInfo, "GET /events/{id}")


def event_standings(server: str, event_id: str) -> p.EventStandings:
    data = _request(server, "GET", f"/events/{_quote(event_id)}/standings")
    return _typed(data, p.EventStandings, "GET /events/{id}/standings")


def event_fairplay(server: str, organiser_token: str, event_id: str) -> p.FairPlayReport:
    """``GET /events/{id}/fairplay`` with the organiser's token: the flags with their evidence."""
    data = _request(server, "GET", f"/events/{_quote(event_id)}/fairplay", key=organiser_token)
    return _typed(data, p.FairPlayReport, "GET /events/{id}/fairplay")


def start_event(server: str, organiser_token: str, event_id: str) -> p.EventInfo:
    data = _request(server, "POST", f"/events/{_quote(event_id)}/start", b"{}", key=organiser_token)
    return _typed(data, p.EventInfo, "POST /events/{id}/start")


def cancel_event(server: str, organiser_token: str, event_id: str, series: bool = False) -> p.EventInfo:
    """``POST /events/{id}/cancel`` with the organiser's token (``series``: no further occurrences)."""
    body = msgspec.json.encode(p.EventCancel(series=series))
    data = _request(server, "POST", f"/events/{_quote(event_id)}/cancel", body, key=organiser_token)
    return _typed(data, p.EventInfo, "POST /events/{id}/cancel")


def enter_event(server: str, event_id: str, key: str) -> p.EventEntry:
    data = _request(server, "POST", f"/events/{_quote(event_id)}/entrants", b"{}", key=key)
    return _typed(data, p.EventEntry, "POST /events/{id}/entrants")


def check_in(server: str, event_id: str, key: str) -> p.EventEntry:
    data = _request(server, "POST", f"/events/{_quote(event_id)}/check-in", b"{}", key=key)
    return _typed(data, p.EventEntry, "POST /events/{id}/check-in")


def withdraw_from_event(server: str, event_id: str, name: str, key: str) -> p.EventEntry:
    data = _request(server, "DELETE", f"/events/{_quote(event_id)}/entrants/{_quote(name)}", key=key)
    return _typed(data, p.EventEntry, "DELETE /events/{id}/entrants/{name}")


def play_daily(server: str, variant: str, key: str) -> p.DailyPlay:
    data = _request(server, "POST", f"/daily/{_quote(variant)}", b"{}", key=key)
    return _typed(data, p.DailyPlay, "POST /daily/{variant}")


def daily_board(server: str, variant: str, date: str | None = None) -> p.DailyBoard:
    query = f"?date={_quote(date)}" if date else ""
    return _typed(_request(server, "GET", f"/daily/{_quote(variant)}{query}"), p.DailyBoard, "GET /daily/{variant}")


def event_frames(server: str, event_id: str) -> Iterator[p.EventLive]:
    """The live frames of ``GET /events/{id}/stream`` (Server-Sent Events), as they come; blocking.

    Each frame is whole (the event, its standings, the round under way), so a reconnection loses
    nothing: the server sends the latest frame at once."""
    url = server_url(server) + f"/events/{_quote(event_id)}/stream"
    req = urllib.request.Request(url, headers={"Accept": "text/event-stream"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            name = None
            for raw in resp:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:") and name == "event":
                    yield _typed(json.loads(line[5:]), p.EventLive, "GET /events/{id}/stream")
                elif not line:
                    name = None
    except urllib.error.HTTPError as exc:
        code, text = _error_body(exc)
        raise ApiError(f"GET {url}: {exc.code} {text}", exc.code, code, None, text) from None
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise _unreachable(server_url(server), exc) from None


# -------------------------------------------------------------- challenges
def challenge(server: str, key: str, create: p.ChallengeCreate) -> p.Challenge:
    """``POST /challenges``: invite an account to a race of two."""
    data = _request(server, "POST", "/challenges", msgspec.json.encode(create), key=key)
    return _typed(data, p.Challenge, "POST /challenges")


def challenges(server: str, key: str) -> p.ChallengeList:
    """``GET /challenges``: the account's open challenges, received and sent."""
    return _typed(_request(server, "GET", "/challenges", key=key), p.ChallengeList, "GET /challenges")


def challenge_status(server: str, key: str, challenge_id: str) -> p.Challenge:
    """``GET /challenges/{id}``: one challenge as it stands (its two accounts only)."""
    data = _request(server, "GET", f"/challenges/{_quote(challenge_id)}", key=key)
    return _typed(data, p.Challenge, "GET /challenges/{id}")


def answer_challenge(server: str, key: str, challenge_id: str, action: str) -> p.Challenge:
    """``POST /challenges/{id}/accept`` (the race is made), ``/decline`` or ``/cancel``."""
    data = _request(server, "POST", f"/challenges/{_quote(challenge_id)}/{action}", b"{}", key=key)
    return _typed(data, p.Challenge, f"POST /challenges/{{id}}/{action}")


def set_challenges(server: str, name: str, key: str, accept: bool) -> p.ChallengeSetting:
    """``POST /players/{name}/challenges``: take challenges, or refuse them all."""
    body = msgspec.json.encode(p.ChallengeSetting(accept=accept))
    data = _request(server, "POST", f"/players/{_quote(name)}/challenges", body, key=key)
    return _typed(data, p.ChallengeSetting, "POST /players/{name}/challenges")


def rematch_state(server: str, race: str) -> p.Rematch:
    """``GET /races/{race}/rematch``: a finished race's rematch offer as it stands."""
    return _typed(_request(server, "GET", f"/races/{_quote(race)}/rematch"), p.Rematch, "GET /races/{race}/rematch")


def answer_rematch(server: str, race: str, key: str, accept: bool) -> p.Rematch:
    """``POST /races/{race}/rematch``: offer or accept a rematch (``accept``), or decline it."""
    body = msgspec.json.encode(p.RematchAnswer(accept=accept))
    data = _request(server, "POST", f"/races/{_quote(race)}/rematch", body, key=key)
    return _typed(data, p.Rematch, "POST /races/{race}/rematch")

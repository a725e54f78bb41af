"""What the client keeps between runs, per race server: the account and the seats.

One JSON file, ``$XDG_CONFIG_HOME/thieves/servers.json`` (else
``~/.config/thieves/servers.json``)::

    {"version": 1,
     "servers": {
       "http://127.0.0.1:8000": {
         "account": {"name": "Bob", "key": "bob.…", "saved_at": 1764590000000},
         "seats": {"<race id>": {"<name, case-folded>": {"token": "…", "code": "8N2BWJ",
                                  "name": "Bob", "account": "bob", "saved_at": 1764590000000}}},
         "created": {"<race id>": {"code": "8N2BWJ", "creator_token": "…", "holder": "ann", "saved_at": …}}}}}

Why each piece:

- The account key is a secret the server shows once: the directory is
  0700 and the file 0600, created with those modes (never widened later).
- A player token is what takes a seat back after ``q``, a crash or a
  ``kill -9``, so it is written as soon as a ``welcome`` brings it (and
  again for every renewed token). Seats are keyed by race and name so that
  several anonymous bots of one machine in one race keep one seat each.
- Several ``thieves bot`` processes may save at the same moment: every
  change is a read-modify-write under an exclusive ``fcntl`` lock on a
  separate lock file, and the new file replaces the old one atomically
  (``os.replace`` of a fully written, fsynced temporary file), so a reader
  never sees half a file and no writer's change is lost.
- A creator token kept by ``thieves create`` is for the creator alone, yet
  every player on this machine reads this one file (the README's rival in a
  third terminal too): the token goes to one seat name, its ``holder`` (the
  account ``create`` ran as, else the first seat that asks for it), never to
  a rival who joins from the same machine.
- Tokens live a day on the server: older seats are dropped, and at most
  :data:`MAX_SEATS` are kept per server (the newest).

Server addresses are normalised with :func:`client_cli.api.server_url`, so
``127.0.0.1:8000`` and ``http://127.0.0.1:8000/ws`` are one entry.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .api import server_url

FILE_NAME = "servers.json"
LOCK_NAME = "servers.json.lock"
FORMAT_VERSION = 1
SEAT_TTL_MS = 24 * 3600 * 1000
"""A player token's lifetime on the server (``--token-ttl``'s default): an older seat cannot be taken back."""
MAX_SEATS = 100
"""Seats kept per server; the oldest go first."""


class StoreError(Exception):
    """The file cannot be read or written; the message says which file and why."""


def now_ms() -> int:
    return int(time.time() * 1000)


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/thieves`` (the XDG base directory rule), else ``~/.config/thieves``."""
    base = os.environ.get("XDG_CONFIG_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / "thieves"


def store_path() -> Path:
    return config_dir() / FILE_NAME


@dataclass(frozen=True)
class Account:
    """An account as kept here: its name (as registered) and its secret key."""

    name: str
    key: str


@dataclass(frozen=True)
class Seat:
    """A seat this machine holds in a race: enough to take it back."""

    race: str
    token: str
    code: str
    name: str
    account: str | None
    saved_at: int


def _empty() -> dict[str, Any]:
    return {"version": FORMAT_VERSION, "servers": {}}


class LocalStore:
    """The client's file of accounts and seats; every method reads the file afresh.

    Reads need no lock (the file is only ever replaced whole); changes go
    through :meth:`_change`, which holds the lock from the read to the
    replace.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or store_path()

    # ------------------------------------------------------------ reading
    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _empty()
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror}") from None
        try:
            data = json.loads(text)
        except ValueError:
            raise StoreError(f"{self.path} is not JSON: fix or remove it") from None
        if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
            raise StoreError(f"{self.path} is not a thieves servers file: fix or remove it")
        return data

    def _server(self, data: dict[str, Any], server: str) -> dict[str, Any]:
        entry = data["servers"].get(server_url(server))
        return entry if isinstance(entry, dict) else {}

    def account(self, server: str) -> Account | None:
        """The account kept for ``server``, or ``None``."""
        acc = self._server(self._read(), server).get("account")
        if isinstance(acc, dict) and isinstance(acc.get("name"), str) and isinstance(acc.get("key"), str):
            return Account(acc["name"], acc["key"])
        return None

    def seats(self, server: str, race: str) -> list[Seat]:
        """This machine's live seats in ``race`` (an id or a join code), newest first."""
        out: list[Seat] = []
        cutoff = now_ms() - SEAT_TTL_MS
        for race_id, by_name in self._server(self._read(), server).get("seats", {}).items():
            if not isinstance(by_name, dict):
                continue
            for rec in by_name.values():
                if not isinstance(rec, dict) or not isinstance(rec.get("token"), str):
                    continue
                if race not in (race_id, rec.get("code")) or int(rec.get("saved_at", 0)) < cutoff:
                    continue
                out.append(Seat(race_id, rec["token"], str(rec.get("code", "")), str(rec.get("name", "")),
                                rec.get("account"), int(rec.get("saved_at", 0))))
        return sorted(out, key=lambda s: -s.saved_at)

    def creator_token(self, server: str, race: str) -> str | None:
        """The creator token ``thieves create`` saved for ``race`` (id or code), or ``None``."""
        rec = _created(self._server(self._read(), server), race)
        return rec["creator_token"] if rec is not None else None

    def take_creator_token(self, server: str, race: str, name: str) -> str | None:
        """The creator token kept for ``race`` if the seat ``name`` holds it, else ``None``.

        A token nobody holds yet becomes ``name``'s (the first seat this machine plays in the race
        after ``thieves create``); one held by another name is not given out, so a rival playing
        from the same machine is not taken for the creator.
        """
        holder = name.casefold()
        rec = _created(self._server(self._read(), server), race)
        if rec is None or rec.get("holder") not in (None, holder):
            return None
        if rec.get("holder") is None:
            with self._change() as data:  # under the lock: of two first seats at once, one holds it
                rec = _created(data["servers"].get(server_url(server), {}), race)
                if rec is None:
                    return None
                rec["holder"] = rec.get("holder") or holder
            if rec["holder"] != holder:
                return None
        return rec["creator_token"]

    # ------------------------------------------------------------ changing
    def set_account(self, server: str, account: Account) -> None:
        with self._change() as data:
            entry = data["servers"].setdefault(server_url(server), {})
            entry["account"] = {"name": account.name, "key": account.key, "saved_at": now_ms()}

    def forget_account(self, server: str) -> Account | None:
        """Remove the account kept for ``server``; the one removed, or ``None``."""
        with self._change() as data:
            entry = data["servers"].get(server_url(server), {})
            acc = entry.pop("account", None)
        if isinstance(acc, dict) and "name" in acc and "key" in acc:
            return Account(acc["name"], acc["key"])
        return None

    def save_seat(self, server: str, race: str, token: str, code: str, name: str, account: str | None) -> None:
        """Keep (or renew) the token of this machine's seat ``name`` in ``race`` (its id)."""
        with self._change() as data:
            entry = data["servers"].setdefault(server_url(server), {})
            seats = entry.setdefault("seats", {})
            seats.setdefault(race, {})[name.casefold()] = {
                "token": token, "code": code, "name": name, "account": account, "saved_at": now_ms()}
            _prune(entry)

    def forget_seat(self, server: str, race: str, name: str) -> None:
        """Drop a seat that is gone (left, freed, or its token refused)."""
        with self._change() as data:
            seats = data["servers"].get(server_url(server), {}).get("seats", {})
            by_name = seats.get(race, {})
            by_name.pop(name.casefold(), None)
            if not by_name:
                seats.pop(race, None)

    def release_creator_token(self, server: str, race: str, name: str) -> None:
        """The seat ``name`` is given back: the kept creator token it held goes to the next seat played."""
        if (rec := _created(self._server(self._read(), server), race)) is None or rec.get("holder") != name.casefold():
            return
        with self._change() as data:
            rec = _created(data["servers"].get(server_url(server), {}), race)
            if rec is not None and rec.get("holder") == name.casefold():
                rec["holder"] = None

    def save_created(self, server: str, race: str, code: str, creator_token: str,
                     holder: str | None = None) -> None:
        """Keep the creator token of a race this machine created, so ``thieves play CODE`` can start it;
        ``holder`` is the creator's seat name when known (the account), else the first seat to play
        takes it (:meth:`take_creator_token`)."""
        with self._change() as data:
            entry = data["servers"].setdefault(server_url(server), {})
            entry.setdefault("created", {})[race] = {
                "code": code, "creator_token": creator_token, "saved_at": now_ms(),
                "holder": holder.casefold() if holder is not None else None}
            _prune(entry)

    @contextlib.contextmanager
    def _change(self) -> Iterator[dict[str, Any]]:
        """Read, let the caller change, write back: all under the lock, the file replaced whole."""
        directory = self.path.parent
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if directory.stat().st_mode & 0o077:
                directory.chmod(0o700)  # the thieves directory is ours: nobody else reads a key in it
            lock_fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot write in {directory}: {exc.strerror}") from None
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            data = self._read()
            data.setdefault("servers", {})
            yield data
            data["version"] = FORMAT_VERSION
            self._write(data)
        finally:
            os.close(lock_fd)  # closing releases the lock

    def _write(self, data: dict[str, Any]) -> None:
        directory = self.path.parent
        try:
            fd, tmp = tempfile.mkstemp(prefix=".servers.", suffix=".tmp", dir=directory)  # mode 0600
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(data, out, indent=1, sort_keys=True)
                    out.write("\n")
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            dir_fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            raise StoreError(f"cannot write {self.path}: {exc.strerror}") from None


def _created(entry: dict[str, Any], race: str) -> dict[str, Any] | None:
    """The newest live ``created`` record of ``race`` (its id or join code) in a server's entry."""
    cutoff = now_ms() - SEAT_TTL_MS
    best: dict[str, Any] | None = None
    for race_id, rec in entry.get("created", {}).items():
        if isinstance(rec, dict) and race in (race_id, rec.get("code")) and isinstance(rec.get("creator_token"), str):
            at = int(rec.get("saved_at", 0))
            if at >= cutoff and (best is None or at > int(best.get("saved_at", 0))):
                best = rec
    return best


def _prune(entry: dict[str, Any]) -> None:
    """Drop seats and creator tokens past the token lifetime; keep the newest :data:`MAX_SEATS` seats."""
    cutoff = now_ms() - SEAT_TTL_MS
    seats = entry.get("seats", {})
    flat = [(int(rec.get("saved_at", 0)), race, name)
            for race, by_name in seats.items() if isinstance(by_name, dict)
            for name, rec in by_name.items() if isinstance(rec, dict)]
    flat.sort(reverse=True)
    keep = {(race, name) for at, race, name in flat[:MAX_SEATS] if at >= cutoff}
    for race in list(seats):
        by_name = seats[race]
        if isinstance(by_name, dict):
            for name in list(by_name):
                if (race, name) not in keep:
                    del by_name[name]
        if not by_name:
            del seats[race]
    created = entry.get("created", {})
    for race in [r for r, rec in created.items() if not isinstance(rec, dict) or int(rec.get("saved_at", 0)) < cutoff]:
        del created[race]

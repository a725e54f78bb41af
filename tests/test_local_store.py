"""The client's file of accounts and seats: modes, one entry per server however spelled,
atomic replacement, concurrent writers in several processes, pruning; and who joins (identity)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from client_cli import local_store as ls
from client_cli.identity import IdentityProblem, SeatKeeper, resolve
from client_cli.local_store import Account, LocalStore, StoreError
from shared import protocol as p

SERVER = "http://127.0.0.1:8000"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_file_lives_under_xdg_config_home_with_private_modes(private_config: str) -> None:
    store = LocalStore()
    assert store.path == Path(private_config) / "thieves" / "servers.json"
    store.set_account(SERVER, Account("Bob", "bob.secret"))
    assert mode(store.path.parent) == 0o700
    assert mode(store.path) == 0o600
    assert mode(store.path.parent / ls.LOCK_NAME) == 0o600
    assert [f.name for f in store.path.parent.iterdir() if f.name.endswith(".tmp")] == []
    assert json.loads(store.path.read_text())["servers"][SERVER]["account"]["key"] == "bob.secret"


def test_without_xdg_config_home_it_is_under_the_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ls.store_path() == tmp_path / ".config" / "thieves" / "servers.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")  # not absolute: ignored, as the XDG rule says
    assert ls.store_path() == tmp_path / ".config" / "thieves" / "servers.json"


def test_an_existing_open_directory_is_closed_to_others(private_config: str) -> None:
    directory = Path(private_config) / "thieves"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    LocalStore().set_account(SERVER, Account("Bob", "bob.k"))
    assert mode(directory) == 0o700


@pytest.mark.parametrize("spelling", ["127.0.0.1:8000", "http://127.0.0.1:8000/", "ws://127.0.0.1:8000/ws",
                                      "HTTP://127.0.0.1:8000"])
def test_every_spelling_of_a_server_is_one_entry(spelling: str) -> None:
    store = LocalStore()
    store.set_account(spelling, Account("Bob", "bob.k"))
    assert store.account(SERVER) == Account("Bob", "bob.k")
    store.save_seat(spelling, "r1", "tok", "ABC123", "Bob", "bob")
    assert [s.token for s in store.seats(SERVER, "ABC123")] == ["tok"]
    assert list(json.loads(store.path.read_text())["servers"]) == [SERVER]
    assert store.account("https://127.0.0.1:8000") is None  # another scheme is another server


def test_seats_are_found_by_race_id_or_code_and_renewed_in_place() -> None:
    store = LocalStore()
    store.save_seat(SERVER, "r1", "t1", "ABC123", "ann", None)
    store.save_seat(SERVER, "r1", "t2", "ABC123", "Ann", None)  # a renewed token, the same seat (any case)
    store.save_seat(SERVER, "r1", "t3", "ABC123", "bob", None)
    assert sorted(s.token for s in store.seats(SERVER, "r1")) == ["t2", "t3"]
    assert sorted(s.token for s in store.seats(SERVER, "ABC123")) == ["t2", "t3"]
    store.forget_seat(SERVER, "r1", "ANN")
    assert [s.name for s in store.seats(SERVER, "r1")] == ["bob"]
    assert store.seats(SERVER, "other") == []


def test_seats_older_than_a_token_lifetime_and_beyond_the_cap_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore()
    clock = [1_000_000_000_000]
    monkeypatch.setattr(ls, "now_ms", lambda: clock[0])
    store.save_seat(SERVER, "old", "t-old", "OLD111", "ann", None)
    store.save_created(SERVER, "old", "OLD111", "creator")
    clock[0] += ls.SEAT_TTL_MS + 1
    assert store.seats(SERVER, "old") == []  # too old to take back: not offered
    assert store.creator_token(SERVER, "OLD111") is None
    for i in range(ls.MAX_SEATS + 5):
        clock[0] += 1
        store.save_seat(SERVER, f"r{i}", f"t{i}", f"C{i}", "ann", None)
    seats = json.loads(store.path.read_text())["servers"][SERVER]["seats"]
    assert "old" not in seats  # dropped from the file too
    assert len(seats) == ls.MAX_SEATS
    assert "r0" not in seats and f"r{ls.MAX_SEATS + 4}" in seats  # the oldest went first
    assert "old" not in json.loads(store.path.read_text())["servers"][SERVER]["created"]


def test_a_file_that_is_not_ours_is_named_not_overwritten(private_config: str) -> None:
    store = LocalStore()
    store.path.parent.mkdir(parents=True)
    store.path.write_text("{not json")
    with pytest.raises(StoreError, match=str(store.path)):
        store.account(SERVER)
    with pytest.raises(StoreError, match="not JSON"):
        store.set_account(SERVER, Account("Bob", "bob.k"))
    assert store.path.read_text() == "{not json"


def test_forget_account_and_creator_tokens() -> None:
    store = LocalStore()
    assert store.forget_account(SERVER) is None
    store.set_account(SERVER, Account("Bob", "bob.k"))
    assert store.forget_account(SERVER) == Account("Bob", "bob.k")
    assert store.account(SERVER) is None
    store.save_created(SERVER, "r1", "ABC123", "ct")
    assert store.creator_token(SERVER, "ABC123") == store.creator_token(SERVER, "r1") == "ct"


WRITER = textwrap.dedent("""
    import sys
    from client_cli.local_store import LocalStore
    who, count = sys.argv[1], int(sys.argv[2])
    store = LocalStore()
    for i in range(count):
        store.save_seat("127.0.0.1:8000", f"race-{who}-{i}", f"tok-{who}-{i}", "CODE", who, None)
""")


def test_several_processes_writing_at_once_lose_nothing() -> None:
    """Like several ``thieves bot`` processes saving their tokens at the same moment: every
    read-modify-write holds the lock, so each process's seats all survive."""
    writers, each = 4, 20  # 80 seats, under the cap
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, f"w{n}", str(each)], env=os.environ.copy())
             for n in range(writers)]
    reader = LocalStore()
    while any(proc.poll() is None for proc in procs):
        reader.seats(SERVER, "CODE")  # a reader meanwhile always finds a whole file (it would raise otherwise)
    assert [proc.returncode for proc in procs] == [0] * writers
    tokens = {s.token for s in reader.seats(SERVER, "CODE")}
    assert tokens == {f"tok-w{n}-{i}" for n in range(writers) for i in range(each)}
    assert [f.name for f in reader.path.parent.iterdir() if f.name.endswith(".tmp")] == []
    assert mode(reader.path) == 0o600


def test_a_failed_write_leaves_the_old_file_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore()
    store.set_account(SERVER, Account("Bob", "bob.k"))
    before = store.path.read_bytes()

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ls.os, "replace", broken)
    with pytest.raises(StoreError, match="No space left"):
        store.set_account(SERVER, Account("Cy", "cy.k"))
    assert store.path.read_bytes() == before
    assert [f.name for f in store.path.parent.iterdir() if f.name.endswith(".tmp")] == []


# ----------------------------------------------------------------- identity
def test_the_account_is_used_unless_anonymous() -> None:
    store = LocalStore()
    store.set_account(SERVER, Account("Bob", "bob.k"))
    joining = resolve(store, SERVER, "ABC123", None, anonymous=False)
    assert (joining.name, joining.key, joining.account, joining.token) == ("Bob", "bob.k", "bob", None)
    assert resolve(store, SERVER, "ABC123", "BOB", anonymous=False).key == "bob.k"  # its name in any case
    with pytest.raises(IdentityProblem, match="registered on this server as Bob.*--anonymous"):
        resolve(store, SERVER, "ABC123", "ann", anonymous=False)
    anon = resolve(store, SERVER, "ABC123", "ann", anonymous=True)
    assert (anon.name, anon.key, anon.account) == ("ann", None, None)


def test_a_saved_seat_is_taken_back_by_its_own_identity_only() -> None:
    store = LocalStore()
    with pytest.raises(IdentityProblem, match="--name NAME is needed"):
        resolve(store, SERVER, "ABC123", None, anonymous=False)
    store.save_seat(SERVER, "r1", "anon-tok", "ABC123", "ann", None)
    again = resolve(store, SERVER, "ABC123", None, anonymous=False)  # no --name: the one seat kept
    assert (again.name, again.token, again.seat_race) == ("ann", "anon-tok", "r1")
    store.set_account(SERVER, Account("Bob", "bob.k"))
    assert resolve(store, SERVER, "ABC123", None, anonymous=False).token is None  # not the account's seat
    store.save_seat(SERVER, "r1", "bob-tok", "ABC123", "Bob", "bob")
    assert resolve(store, SERVER, "r1", None, anonymous=False).token == "bob-tok"
    store.save_seat(SERVER, "r1", "cy-tok", "ABC123", "cy", None)
    with pytest.raises(IdentityProblem, match="under ann, cy"):
        resolve(store, SERVER, "ABC123", None, anonymous=True)
    assert resolve(store, SERVER, "ABC123", "cy", anonymous=True).token == "cy-tok"


def test_the_keeper_saves_every_token_and_forgets_a_gone_seat() -> None:
    store = LocalStore()
    joining = resolve(store, SERVER, "ABC123", "ann", anonymous=True)
    keeper = SeatKeeper(store, SERVER, joining)
    info = p.RaceInfo(id="r1", code="ABC123", variant="forty-thieves", deal_source="random", seats=2, players=1,
                      time_limit=60, undo=True, start_mode="creator", status="lobby", commitment="c", created_at=0)
    for token in ("t1", "t2"):
        keeper(p.Welcome(protocol=1, race=info, role="player", seat=0, token=token, version=1, server_time=0,
                         view=None))
        assert [s.token for s in store.seats(SERVER, "ABC123")] == [token]
    keeper.forget()
    assert store.seats(SERVER, "ABC123") == []
    assert keeper.problem is None

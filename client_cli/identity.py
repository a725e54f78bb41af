"""Who joins a race: the stored account, a name, and the seat this machine kept.

``thieves play`` and ``thieves bot`` both decide here which ``hello`` to
send, so the rules are one: the account kept for the server is used unless
the player asks to be anonymous; a seat saved by an earlier run (after
``q``, a crash, a ``kill -9``) is taken back with its token; and every
token a ``welcome`` brings is saved at once (:class:`SeatKeeper`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from shared import protocol as p

from .local_store import Account, LocalStore, StoreError


@dataclass(frozen=True)
class Joining:
    """What the first ``hello`` carries, and whose seat it is."""

    name: str | None
    key: str | None
    account: str | None
    """The account's name case-folded (as ``Standing.account`` has it), ``None`` when anonymous."""
    token: str | None
    """A saved player token: take that seat back."""
    creator_token: str | None
    seat_race: str | None = None
    """The race id of the saved seat (``hello.race`` may be its join code)."""


class IdentityProblem(Exception):
    """The command cannot tell who joins; the message says what to type."""


def resolve(store: LocalStore, server: str, race: str, name: str | None, anonymous: bool,
            creator_token: str | None = None, take_kept: bool = True) -> Joining:
    """The identity to join ``race`` with, from the options and what the store kept (the creator
    token ``thieves create`` kept only for the seat that holds it: see
    :meth:`~client_cli.local_store.LocalStore.take_creator_token`; ``take_kept=False`` for a
    ``thieves bot``, which starts a race only when given ``--creator-token``, never takes it).

    Raises :class:`IdentityProblem` (a name that is not the account's, no
    name at all) and :class:`~client_cli.local_store.StoreError`.
    """
    account: Account | None = None if anonymous else store.account(server)
    if account is not None and name is not None and name.casefold() != account.name.casefold():
        raise IdentityProblem(f"you are registered on this server as {account.name}: play without --name, "
                              f"or add --anonymous to play as {name} (unrated, no history)")
    owner = account.name.casefold() if account is not None else None
    mine = [s for s in store.seats(server, race) if s.account == owner]
    if account is not None:
        name = account.name
    elif name is None:
        names = sorted({s.name for s in mine})
        if len(names) > 1:
            raise IdentityProblem(f"this machine keeps seats in {race} under {', '.join(names)}: "
                                  "say which with --name")
        if not names:
            raise IdentityProblem("--name NAME is needed to join without an account "
                                  "(or register one once: thieves register NAME)")
        name = names[0]
    seat = next((s for s in mine if s.name.casefold() == name.casefold()), None)
    # Taken even when --creator-token is passed: this seat holds the kept token from now on, so a rival
    # who plays next from this machine (sharing its config) is not given it.
    kept = store.take_creator_token(server, race, name) if take_kept else None
    return Joining(
        name=name,
        key=account.key if account is not None else None,
        account=owner,
        token=seat.token if seat is not None else None,
        creator_token=creator_token or kept,
        seat_race=seat.race if seat is not None else None,
    )


class SeatKeeper:
    """Saves each ``welcome``'s token (the first and every renewed one) under the race and the name.

    A store that cannot be written must not end a race: the problem is
    kept in :attr:`problem` for the command to print after the screen closes.
    """

    def __init__(self, store: LocalStore, server: str, joining: Joining) -> None:
        self.store = store
        self.server = server
        self.joining = joining
        self.problem: str | None = None
        self.race: str | None = joining.seat_race

    def __call__(self, welcome: p.Welcome) -> None:
        if not welcome.token or self.joining.name is None:
            return
        self.race = welcome.race.id
        try:
            self.store.save_seat(self.server, welcome.race.id, welcome.token, welcome.race.code,
                                 self.joining.name, self.joining.account)
        except StoreError as exc:
            self.problem = f"your seat could not be saved ({exc}): after q, `thieves play` cannot take it back"

    def forget(self) -> None:
        """The seat is gone (left, or its token refused): stop offering it, and the creator token it held
        (if any) goes to the next seat this machine plays in the race."""
        if self.race is None or self.joining.name is None:
            return
        try:
            self.store.forget_seat(self.server, self.race, self.joining.name)
            self.store.release_creator_token(self.server, self.race, self.joining.name)
        except StoreError as exc:
            self.problem = str(exc)


def keep_issued_key(store: LocalStore, server: str, issued: p.AccountKeyAnswer, command: str, what: str) -> bool:
    """Keep a key the server has just issued (it shows a key once). False, with the key printed so that
    the account is not lost, when it cannot be kept; ``what`` names the key in that message."""
    try:
        store.set_account(server, Account(issued.name, issued.key))
    except StoreError as exc:
        print(f"thieves {command}: {exc}; {what}, shown only now: {issued.key}", file=sys.stderr)
        return False
    return True

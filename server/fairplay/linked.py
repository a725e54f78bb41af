"""Linked accounts: two entrants of one shared deal that were registered from one address, or together.

A scout and its beneficiary are usually made by one person, at once, from one place: the issue's were
registered 4-5 ms apart. Either link is evidence, not proof (a household, a club's room, a busy hour),
so it is a flag for the organiser to weigh beside the others, never a refusal.
"""

from __future__ import annotations

from ..store.fairplay import AccountFacts

TOGETHER_MS = 5_000
"""Registered within this of each other: "registered together"."""


def linked_groups(facts: list[AccountFacts], together_ms: int = TOGETHER_MS) -> dict[str, list[str]]:
    """Each account of ``facts`` linked to another of them, with the accounts it is linked to."""
    out: dict[str, list[str]] = {}
    for a in facts:
        for b in facts:
            if a.account == b.account or not (a.exists and b.exists):
                continue
            same_place = bool(a.reg_from) and a.reg_from == b.reg_from
            together = together_ms > 0 and abs(a.created_at - b.created_at) <= together_ms
            if same_place or together:
                out.setdefault(a.account, []).append(b.account)
    return out


def link_words(facts: dict[str, AccountFacts], account: str, others: list[str], together_ms: int) -> str:
    """Why ``account`` is linked to ``others``, in words."""
    me = facts[account]
    parts = []
    for other in others:
        o = facts[other]
        why = []
        if me.reg_from and me.reg_from == o.reg_from:
            why.append("registered from the same address")
        gap = abs(me.created_at - o.created_at)
        if together_ms > 0 and gap <= together_ms:
            why.append(f"registered {gap} ms apart")
        parts.append(f"{other} ({', '.join(why)})")
    return "linked to " + "; ".join(parts) + " on the same deal"

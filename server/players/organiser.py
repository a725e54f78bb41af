"""The organiser's proof: the server's ``--organiser-token`` as ``Authorization: Bearer``.

Guessing it is limited per client address, over every server process: each attempt takes a token of
the address's bucket in Redis (``Service.organiser_failures``), and a right one gives it back, so
only wrong ones count. The bucket is taken before the token is compared, so an address that has
used up its wrong guesses is answered 429 whatever it sends (no answer tells it whether a guess
was right), and guesses sent at once cannot overdraw it.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request

from shared import protocol as p

from ..ops.http import bearer
from ..race.requests import client_of, service_of
from ..store.keys import organiser_keys
from ..store.limits import retry_after


def organiser_matches(given: str | None, expected: str) -> bool:
    """Whether ``given`` (any text, or none) is the organiser token, in time that does not tell how
    much of it was right."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


async def require_organiser(request: Request) -> None:
    """Return when the request carries the organiser token; else raise the refusal that says why not
    (``organiser_required``, 403, or ``organiser_rate_limited``, 429 with ``Retry-After``, once the
    address has sent too many wrong ones)."""
    service = service_of(request)
    expected = service.config.events.organiser_token
    if not expected:
        raise p.Refusal(p.ErrorCode.ORGANISER_REQUIRED,
                        "this server runs no events: it was started without --organiser-token")
    bucket = organiser_keys(client_of(request))
    if wait_ms := await service.organiser_failures.take(bucket):
        raise p.Refusal(p.ErrorCode.ORGANISER_RATE_LIMITED,
                        f"too many wrong organiser tokens from this address: try again in {wait_ms / 1000:.1f} s",
                        retry_after=retry_after(wait_ms))
    if not organiser_matches(bearer(request), expected):
        raise p.Refusal(p.ErrorCode.ORGANISER_REQUIRED,
                        "send the server's organiser token as 'Authorization: Bearer <token>' "
                        "(a player's key is not one)")
    await service.organiser_failures.give_back(bucket)

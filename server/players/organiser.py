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
from starlette.responses import Response

from shared import protocol as p

from ..answers import bearer, client_of, error_response, service_of
from ..store.keys import organiser_keys
from ..store.limits import retry_after


def organiser_matches(given: str | None, expected: str) -> bool:
    """Whether ``given`` (any text, or none) is the organiser token, in time that does not tell how
    much of it was right."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


async def organiser_refusal(request: Request) -> Response | None:
    """None when the request carries the organiser token; else the answer that says why not (403, or
    429 with ``Retry-After`` once the address has sent too many wrong ones)."""
    service = service_of(request)
    expected = service.config.organiser_token
    if not expected:
        return error_response(p.ErrorCode.ORGANISER_REQUIRED, 403,
                              "this server runs no events: it was started without --organiser-token")
    bucket = organiser_keys(client_of(request))
    if wait_ms := await service.organiser_failures.take(bucket):
        response = error_response(p.ErrorCode.ORGANISER_RATE_LIMITED, 429,
                                  f"too many wrong organiser tokens from this address: try again in "
                                  f"{wait_ms / 1000:.1f} s")
        response.headers["Retry-After"] = str(retry_after(wait_ms))
        return response
    if organiser_matches(bearer(request), expected):
        await service.organiser_failures.give_back(bucket)
        return None
    return error_response(p.ErrorCode.ORGANISER_REQUIRED, 403,
                          "send the server's organiser token as 'Authorization: Bearer <token>' "
                          "(a player's key is not one)")

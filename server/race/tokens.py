"""Signed tokens: a player's claim on its seat, and a creator's on its race.

A token is ``<race>.<seat>.<expiry>.<signature>``: plain fields a client
can read, and an HMAC-SHA256 over them and the token's kind, so a player
token never passes for a creator token. Nothing is stored per token; any
server process holding the same secret checks it.

A player token is also signed with its seat's generation (kept in Redis,
raised each time the seat is given back in the lobby), which the token does
not show: once a seat changes hands, its old tokens no longer verify. The
generation of a seat never given back is 0, signed as tokens always were.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass

from shared.protocol import CodedError, ErrorCode

PLAYER = "player"
CREATOR = "creator"
_SHAPE = re.compile(r"(?P<race>[A-Za-z0-9_-]{1,64})\.(?P<seat>-?[0-9]{1,9})\.(?P<expires>[0-9]{1,15})"
                    r"\.(?P<mac>[A-Za-z0-9_-]{1,128})")
"""What a token looks like: ASCII only (``hmac.compare_digest`` refuses to compare other text, and
``int`` reads digits of other scripts), the numbers of bounded length."""


class TokenError(CodedError, ValueError):
    """A token that does not prove anything; ``code`` is bad_token or token_expired."""


@dataclass(frozen=True)
class Claim:
    race: str
    seat: int
    expires: int
    """Milliseconds since the epoch."""


class Signer:
    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("the token secret must be at least 16 bytes")
        self._secret = secret

    def _mac(self, kind: str, body: str, gen: int) -> str:
        signed = f"{kind}:{body}" if gen == 0 else f"{kind}#{gen}:{body}"
        digest = hmac.new(self._secret, signed.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def sign(self, kind: str, race: str, seat: int, expires_ms: int, gen: int = 0) -> str:
        body = f"{race}.{seat}.{expires_ms}"
        return f"{body}.{self._mac(kind, body, gen)}"

    @staticmethod
    def seat_of(token: str) -> tuple[str, int] | None:
        """The race and seat a token names, unchecked (to look up the generation it must be signed with)."""
        shape = _SHAPE.fullmatch(token)
        return (shape["race"], int(shape["seat"])) if shape else None

    def verify(self, kind: str, token: str, race: str | None, now_ms: int, gen: int = 0) -> Claim:
        """The claim in ``token`` (for ``race`` unless None, signed with ``gen``); raises :class:`TokenError`
        (never anything else, whatever the text: the shape is checked before any of it is used)."""
        shape = _SHAPE.fullmatch(token)
        if shape is None:
            raise TokenError(ErrorCode.BAD_TOKEN, "malformed token")
        body, mac = token.rpartition(".")[0], shape["mac"].encode()
        if not hmac.compare_digest(mac, self._mac(kind, body, gen).encode()):
            if any(hmac.compare_digest(mac, self._mac(kind, body, old).encode())
                   for old in range(max(0, gen - 20), gen)):
                raise TokenError(ErrorCode.BAD_TOKEN, "the seat was given back in the lobby: this token "
                                                      "no longer holds it (join again)")
            raise TokenError(ErrorCode.BAD_TOKEN, f"the token's signature is not this server's ({kind} token)")
        claim = Claim(shape["race"], int(shape["seat"]), int(shape["expires"]))
        if race is not None and claim.race != race:
            raise TokenError(ErrorCode.BAD_TOKEN, "the token is for another race")
        if claim.expires <= now_ms:
            raise TokenError(ErrorCode.TOKEN_EXPIRED, ErrorCode.TOKEN_EXPIRED.explanation)
        return claim

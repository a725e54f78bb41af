"""What the app and the pages share of HTTP: the security headers on every answer, and (re-exported from
the layers that define them) the JSON answers, the one answer to a refusal (server/ops/http.py), the
service (server/race/requests.py) and the events side (server/events/requests.py)."""

from __future__ import annotations

from .events.requests import tournaments_of
from .ops.http import bearer, error_response, json_body, json_response, refusal_answer, refusal_response
from .race.requests import client_of, service_of

__all__ = ["SECURITY_HEADERS", "bearer", "client_of", "error_response", "json_body", "json_response",
           "refusal_answer", "refusal_response", "service_of", "tournaments_of"]

SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
"""On every answer (OWASP's secure headers): the pages run only their own scripts and styles (no
inline ones, nothing from elsewhere), no answer is sniffed into another type, no page is framed,
and no address of ours leaks to a site a page links to."""

"""Rendering the pages: the Jinja2 environment and the words every page uses for a status or a variant.

Autoescaped everywhere: names are the players' own text.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
import markupsafe
from starlette.responses import HTMLResponse

from shared import protocol as p
from shared.event_words import race_word, tiebreak_words
from shared.schedules import shown  # (UTC words: the pages' fallback; static/localtime.js shows the reader's zone)
from shared.standings import FINAL_RACING_WORDS, STATUS_WORDS, status_words
from shared.variants import VARIANTS, get_variant

HERE = Path(__file__).parent

_env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                          trim_blocks=True, lstrip_blocks=True)

STATUS_SIGNS = {
    "waiting": "…", "ready": "✓", "racing": "▶", "blocked": "■", "finished": "★", "gave_up": "✗",
    "disconnected": "◌", "not_joined": "–",
}
"""A status's sign beside its words (never colour alone). The words are ``shared.standings.status_words``,
the terminal client's too."""
FINAL_RACING_SIGN = "◷"
"""A standing's ``racing``: still playing when the time ran out."""
STATUS_LEGEND: dict[str, list[str]] = {
    **{status: [STATUS_SIGNS.get(status, ""), words] for status, words in STATUS_WORDS.items()},
    "final_racing": [FINAL_RACING_SIGN, FINAL_RACING_WORDS],
}
"""Every status's sign and words as the pages' scripts show them (static/table.js reads them from the
page, ``#status-words``): the same as :func:`status_html`'s, from one definition."""


def status_html(status: str, final: bool = False) -> markupsafe.Markup:
    """A status for people: its sign hidden from screen readers, which read the words."""
    sign, words = STATUS_LEGEND.get("final_racing" if final and status == "racing" else status,
                                    ["", status_words(status)])
    return markupsafe.Markup('<span class="sign" aria-hidden="true">{}</span> {}').format(sign, words)


def variant_name(key: str) -> str:
    """A variant's name for people (its key if the server no longer knows it)."""
    try:
        return get_variant(key).name
    except ValueError:
        return key


def clock_text(ms: int | None) -> str:
    """A duration as ``m:ss`` (``h:mm:ss`` past an hour); a dash for none."""
    if ms is None:
        return "–"
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def player_link(name: str, account: str | None) -> markupsafe.Markup:
    """A player's name, a link to its page when it has an account (a guest's name is only a name)."""
    if not account:
        return markupsafe.Markup("{}").format(name)
    return markupsafe.Markup('<a href="/player/{}">{}</a>').format(quote(name, safe=""), name)


def time_tag(ms: int) -> markupsafe.Markup:
    """A server time as UTC words in a ``<time>`` element: static/localtime.js rewrites it in the
    visitor's own time zone (a page without JavaScript still says which zone it shows)."""
    iso = datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return markupsafe.Markup('<time datetime="{}">{}</time>').format(iso, shown(ms))


def render(name: str, code: int = 200, **context: Any) -> HTMLResponse:
    """A template as the response, with the helpers every template may use."""
    html = _env.get_template(name).render(status=status_html, variant_name=variant_name, clock=clock_text,
                                          variants=VARIANTS, status_legend=STATUS_LEGEND,
                                          race_word=race_word, tiebreak_words=tiebreak_words,
                                          player_link=player_link, time_tag=time_tag, **context)
    return HTMLResponse(html, status_code=code)


def not_found(code: p.ErrorCode, what: str) -> HTMLResponse:
    """The typed error as a page: its code is in the page (``data-code``) for scripts and tests."""
    return render("error.html", 404, title="Not found", error_code=code.value, message=what)


def bad_request(code: p.ErrorCode, what: str) -> HTMLResponse:
    return render("error.html", 400, title="Bad request", error_code=code.value, message=what)

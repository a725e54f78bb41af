"""Every racer's foundation progress as ranked bars, and the final standings.

Pure text builders (tested without a terminal) plus the small widget that
shows them beside the table and on the spectator's screen.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from shared import protocol as p
from shared.standings import status_words

from .table import format_clock

STATUS_MARK = {
    "waiting": "…",
    "ready": "✓",
    "racing": " ",
    "blocked": "■",
    "finished": "★",
    "gave_up": "✗",
    "disconnected": "⚡",
}
"""One character per racer status, explained under the bars."""

RACE_LEGEND = ("number: cards home",) + tuple(
    f"{STATUS_MARK[status]} {status_words(status)}" for status in ("finished", "gave_up", "disconnected", "blocked"))
"""What the count and each mark beside a racer's name mean during the race, in the words of
``shared.standings.status_words`` (the web pages' too)."""

HELP_MARK = "†"
"""After the name of a racer who took a hint (played with help)."""
HELP_LEGEND = f"{HELP_MARK} played with help"


def bar(done: int, total: int, width: int) -> str:
    """A bar of ``width`` cells, eighth-cell precise."""
    if width <= 0:
        return ""
    eighths = round(8 * width * done / total) if total else 0
    full, part = divmod(max(0, min(eighths, 8 * width)), 8)
    text = "█" * full + ("▏▎▍▌▋▊▉"[part - 1] if part else "")
    return text + "·" * (width - len(text))


def racer_lines(players: Sequence[p.PlayerProgress], me: int | None, width: int) -> Text:
    """Two lines per racer: rank, name, cards home; then the bar."""
    out = Text()
    for pp in players:
        mine = pp.seat == me
        style = Style(bold=True, color="yellow") if mine else Style()
        mark = STATUS_MARK.get(pp.status, "?")
        count = f"{pp.home:>3}{mark}"
        name_width = max(4, width - 4 - cell_len(count))  # cells: ⚡ takes two
        name = pp.name[: name_width - 2] + " " + HELP_MARK if pp.helped else pp.name[:name_width]
        out.append(f"{pp.rank:>2}. ", Style(dim=not mine))
        out.append(f"{name:<{name_width}}", style)
        out.append(count + "\n", style)
        out.append("    " + bar(pp.home, pp.total, width - 4) + "\n", Style(color="green") + style)
    return out


def lobby_lines(players: Sequence[p.PlayerProgress], me: int | None, width: int) -> Text:
    """One line per seated racer in the lobby: the name and, in words, whether they are ready.

    No rank, count or bar yet: before the start they would all read ``0``.
    """
    out = Text()
    for pp in players:
        mine = pp.seat == me
        state = "✓ ready" if pp.status == "ready" else "… not ready"
        name_width = max(4, width - 3 - len(state))
        out.append(f"  {pp.name[:name_width]:<{name_width}} {state}\n", Style(bold=True, color="yellow") if mine else Style())
    return out


def legend_lines(helped: bool, width: int) -> list[str]:
    """The race legend wrapped to ``width``: every mark a racer's line can carry, and the count."""
    items = list(RACE_LEGEND) + ([HELP_LEGEND] if helped else [])
    lines: list[str] = []
    for item in items:
        if lines and cell_len(lines[-1]) + 2 + cell_len(item) <= width:
            lines[-1] += "  " + item
        else:
            lines.append(item)
    return lines


def standings_lines(
    standings: Iterable[p.Standing], starts_at: int | None, me: int | None = None
) -> list[str]:
    """The final table: rank, name, cards home, moves, and the finishing time when won."""
    lines = [f"{'#':>3}  {'player':<16} {'home':>7} {'moves':>6}  result"]
    helped = False
    for s in standings:
        if s.status == "finished" and s.finished_at is not None and starts_at is not None:
            result = "won in " + format_clock((s.finished_at - starts_at) / 1000)
        else:
            result = status_words(s.status, final=True)
        if s.helped:
            result += f" {HELP_MARK}"
        mark = "▶" if s.seat == me else " "
        lines.append(f"{s.rank:>3}{mark} {s.name[:16]:<16} {s.home:>3}/{s.total:<3} {s.moves:>6}  {result}")
        helped = helped or s.helped
    if helped:
        lines.append(f"{HELP_MARK} played with help (took hints)")
    return lines


class RacersPanel(Static):
    """The side panel: ranked bars; it draws what it is handed."""

    def show(
        self, players: Sequence[p.PlayerProgress], me: int | None, title: str = "Racers", lobby: bool = False
    ) -> None:
        """Ranked bars and the legend during and after the race; in the ``lobby``, who is ready."""
        width = max(10, self.size.width or 24)
        body = Text(title + "\n", Style(bold=True))
        if not players:
            body.append("no racers yet\n", Style(dim=True))
        elif lobby:
            body.append_text(lobby_lines(players, me, width))
        else:
            body.append_text(racer_lines(players, me, width))
            body.append("\n".join(legend_lines(any(pp.helped for pp in players), width)), Style(dim=True))
        self.update(body)

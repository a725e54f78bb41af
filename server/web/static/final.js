// The end of a race: standings, the revealed deal and a replay button for each player.

import { el, helpedMark, playerLink, statusCell } from "./table.js";

/** Fill the result section from a Results (and the deal as text: JSON numbers lose digits above 2^53;
 * while the deal is secret, the server's words saying until when instead). */
export function showFinal(section, results, dealText, secretText, variantName, replay, replayBase) {
  const body = section.querySelector("#standings").tBodies[0];
  body.replaceChildren(...results.standings.map((s) => {
    const status = el("td");
    statusCell(status, s.status, true);
    const name = el("th", { scope: "row" }, playerLink(s.name, s.account));
    const mark = helpedMark(s.helped);
    if (mark) name.append(" ", mark);
    const record = results.records.find((r) => r.seat === s.seat);
    const button = record ? el("button", { type: "button", class: "replay-button",
      "aria-label": `Replay ${s.name}'s game (${record.moves.length} steps)` }, "Replay") : null;
    if (button) button.addEventListener("click", () => replay.open(replayBase + s.seat, s.name));
    return el("tr", { "data-seat": String(s.seat) }, el("td", { class: "rank" }, String(s.rank)), name, status,
      el("td", {}, `${s.home}/${s.total}`), el("td", { class: "wide" }, String(s.moves)), el("td", {}, button));
  }));
  section.querySelector("#winner").replaceChildren(...winnerWords(results));
  const deal = section.querySelector("#deal");
  if (dealText === null || dealText === undefined) {
    deal.replaceChildren(el("p", {}, secretText || "The deal and every game stay secret for now."));
    section.hidden = false;
    hideLiveTable();
    return;
  }
  const line = results.winning_line
    ? el("p", {}, `A winning line of ${results.winning_line.length} moves was proved before the race. `,
      el("button", { type: "button", class: "line-button" }, "Replay the proved winning line")) : null;
  deal.replaceChildren(el("p", {}, "The deal was ", el("strong", {}, `${variantName} deal ${dealText}`),
    " (salt ", el("code", {}, results.salt), "; its SHA-256 commitment ",
    el("code", { class: "hash" }, results.commitment), " was published when the race was created)."));
  if (line) deal.append(line);
  openLine(section, replay, replayBase);
  section.hidden = false;
  hideLiveTable();
}

/** The proved winning line's button (drawn by the server or above) opens its replay: GET .../replay/line. */
export function openLine(section, replay, replayBase) {
  const button = section.querySelector(".line-button");
  if (button) button.addEventListener("click", () => replay.open(replayBase + "line", "the proved winning line"));
}

/** "Won by NAME in m:ss." as the server's page says it (server/web/pages.py, winner_of and winning_ms). */
function winnerWords(results) {
  const first = results.standings[0];
  if (!first || first.status !== "finished") return ["Nobody won: nobody finished the deal."];
  const ms = first.finished_at !== null && first.finished_at !== undefined && results.starts_at
    ? first.finished_at - results.starts_at : null;
  return ["Won by ", playerLink(first.name, first.account),
    ...(ms === null ? [] : [" in ", el("strong", { class: "time" }, clockText(ms))]), "."];
}

/** m:ss (h:mm:ss past an hour), as server/web/render.py's clock_text. */
function clockText(ms) {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/** The live table stops at the last progress before the end: the standings replace it. */
function hideLiveTable() {
  const racers = document.getElementById("racers");
  if (racers) racers.hidden = true;
}

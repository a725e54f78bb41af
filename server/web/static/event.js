// An event's page kept live from GET /events/{id}/stream: whole EventLive frames (docs/events.md),
// so each frame simply redraws the standings, the round under way and its heats.

import { el, statusCell } from "./table.js";

const state = JSON.parse(document.getElementById("state").textContent);
const statusNode = document.getElementById("event-status");
const clock = document.getElementById("clock");
const conn = document.getElementById("conn");
const announcer = document.getElementById("announce");
const standings = document.getElementById("event-standings");
const liveTable = document.getElementById("event-live");
const round = document.getElementById("round");
const heatsSection = document.getElementById("heats-section");
const heats = document.getElementById("heats");
const playedSection = document.getElementById("played-section");
const played = document.getElementById("played");

let frame = state;
let offset = state.server_time - Date.now();
const words = state.words; // the format's words (server/web/event_page.py, event_words): heat/pairing/race...
const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

const ROUND_WORDS = { waiting: "waiting", opening: `drawing the ${words.race}s`, open: `${words.race}s open: join yours`,
  running: "racing", done: "round scored" };

function clockText(ms) {
  if (ms === null || ms === undefined) return "–";
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function drawStatus(e) {
  statusNode.dataset.status = e.status;
  statusNode.dataset.round = String(e.round);
  statusNode.dataset.roundState = e.round_state;
  if (e.status === "registration") statusNode.textContent = "taking entries";
  else if (e.status === "finished" || e.status === "cancelled") statusNode.textContent = e.status;
  else if (e.pairing) statusNode.textContent = "pairing";
  else statusNode.textContent = `round ${e.round} of ${e.rounds}: ${ROUND_WORDS[e.round_state] || e.round_state}`;
}

function drawStandings(e, table) {
  const rows = table.lines.map((line) => el("tr", { "data-account": line.account },
    el("td", { class: "rank" }, String(line.rank)),
    el("th", { scope: "row" }, el("a", { href: `/player/${encodeURIComponent(line.name)}` }, line.name),
      line.withdrawn ? " (withdrawn)" : ""),
    el("td", { class: "points" }, String(line[e.score_field])),
    ...e.tiebreaks.map((field) => el("td", { class: "tiebreak" }, String(line[field]))),
    ...(e.pairing ? arenaCells(e, line) : []),
    el("td", e.pairing ? { class: "wide" } : {}, String(line.home)), el("td", { class: "time" }, clockText(line.time_ms))));
  standings.tBodies[0].replaceChildren(...(rows.length ? rows
    : [el("tr", { class: "empty" }, el("td", { colspan: String(5 + e.tiebreaks.length + (e.pairing ? 4 : 0)) },
      "Nobody has entered yet."))]));
  standings.dataset.version = String(table.version);
  // No time yet (before the first round is scored; an arena keeps none): no column of 0:00s.
  standings.classList.toggle("untimed", !table.lines.some((line) => line.time_ms));
}

/** An arena entrant's wins, streak, whether it is on fire (from state.on_fire wins in a row) and the race it plays now
 * (as event.html draws them). */
function arenaCells(e, line) {
  const codes = new Map();
  for (const r of e.schedule) for (const h of r.heats) codes.set(h.race, h.code);
  const code = codes.get(line.race) || line.race;
  return [el("td", { class: "wins" }, String(line.wins)),
    el("td", { class: "streak" }, String(line.streak)),
    el("td", { class: "fire" }, ...(line.streak >= state.on_fire ? [el("span", { "aria-hidden": "true" }, "🔥"), " yes"]
      : [el("span", { class: "none" }, "no")])),
    el("td", { class: "now" }, line.race && line.status === "playing" ? el("a", { href: `/watch/${code}`, "aria-label": `Watch ${code}` },
      el("span", { class: "long" }, `Watch ${code}`), el("span", { class: "short" }, "▶"))
      : el("span", { class: "none" }, "–"))];
}

function drawLive(e, live, names) {
  round.hidden = !live.length;
  round.querySelector("h2").textContent = `Round ${e.round} live`;
  const heatCode = new Map();
  for (const r of e.schedule) for (const h of r.heats) heatCode.set(h.race, h.code);
  const rows = [...live].sort((a, b) => b.matchpoints - a.matchpoints || a.account.localeCompare(b.account))
    .map((line) => {
      const status = el("td");
      statusCell(status, line.status);
      const code = heatCode.get(line.race);
      return el("tr", { "data-account": line.account, "data-home": String(line.home) },
        el("th", { scope: "row" }, names.get(line.account) || line.account),
        el("td", {}, code ? el("a", { href: `/watch/${code}` }, `${words.race} ${line.heat}`) : `${words.race} ${line.heat}`),
        status, el("td", {}, String(line.home)), el("td", { class: "points" }, String(line.matchpoints)));
    });
  liveTable.tBodies[0].replaceChildren(...rows);
}

function drawHeats(e) {
  const current = e.pairing ? [] : e.schedule.filter((r) => r.round === e.round);
  const list = current.length ? current[current.length - 1].heats : [];
  const byes = current.length ? current[current.length - 1].byes : [];
  heatsSection.hidden = !list.length || e.status === "finished";
  heatsSection.querySelector(".round-number").textContent = String(e.round);
  heats.replaceChildren(...list.map((h) => el("li", {}, el("a", { href: `/watch/${h.code}` },
    `Watch ${words.race} ${h.heat} (${h.code})`), " ", el("span", { class: "rules" }, h.entrants.join(", ")))),
    ...byeItems(byes));
}

/** A round's byes (a Swiss round's odd one out), shown while the round is played and after. */
function byeItems(byes) {
  return byes.length ? [el("li", { class: "bye" }, "Bye: ", el("span", { class: "rules" }, byes.join(", ")))] : [];
}

/** A round's revealed deal, from its text (``deal_text``): JSON numbers lose digits above 2^53, and a deal
 * goes up to 2^63. */
function dealWords(round) {
  return round.deal_text ? ` · ${state.variant_name} deal ${round.deal_text}` : "";
}

/** The rounds whose races are over (as server/web/event_page.py's played_rounds): links to each heat's
 * result and replays, and each round's deal once the event reveals it. */
function drawPlayed(e) {
  const done = e.schedule.filter((r) => e.status === "finished" || r.round < e.round
    || (r.round === e.round && e.round_state === "done"));
  playedSection.hidden = !done.length;
  played.replaceChildren(...done.map((r) => el("li", { "data-round": String(r.round) },
    `${capital(words.unit)} ${r.round}`, dealWords(r),
    el("ul", { class: "heats" }, ...r.heats.map((h) => el("li", {},
      el("a", { href: `/watch/${h.code}` }, `${e.pairing ? "" : `${capital(words.race)} ${h.heat} `}(${h.code}): result and replays`), " ",
      el("span", { class: "rules" }, h.entrants.join(", ")))),
      ...byeItems(r.byes)))));
}

function draw(next, before) {
  const e = next.event;
  drawStatus(e);
  drawStandings(e, next.standings);
  drawLive(e, next.live, new Map(next.standings.lines.map((line) => [line.account, line.name])));
  drawHeats(e);
  drawPlayed(e);
  if (before && (before.event.round !== e.round || before.event.round_state !== e.round_state
      || before.event.status !== e.status)) {
    const leader = next.standings.lines[0];
    announcer.textContent = `${statusNode.textContent}.` + (leader && e.round_state === "done"
      ? ` ${leader.name} leads with ${leader[e.score_field]}.` : "");
  }
}

function tick() {
  const e = frame.event;
  const now = Date.now() + offset;
  const current = e.schedule.filter((r) => r.round === e.round);
  const starts = current.length ? current[current.length - 1].starts_at : null;
  if (e.status === "registration" && e.starts_at) clock.textContent = `starts in ${clockText(e.starts_at - now)}`;
  else if (e.status !== "running") clock.textContent = "";
  else if (e.ends_at) clock.textContent = `${clockText(e.ends_at - now)} left`;
  else if (e.round_state === "done" && e.next_at) clock.textContent = `next round in ${clockText(e.next_at - now)}`;
  else if (starts && now < starts) clock.textContent = `starts in ${clockText(starts - now)}`;
  else if (starts && e.round_state === "running") clock.textContent = `${clockText(starts + e.time_limit * 1000 - now)} left`;
  else clock.textContent = "";
}

function setConn(kind, text) {
  conn.dataset.state = kind;
  conn.textContent = text;
}

/** Follow the event's stream until the event is over (a finished event's page has nothing left to follow). */
function follow() {
  setConn("connecting", "◌ connecting…"); // the page's own words are for a browser without JavaScript
  const source = new EventSource(state.stream);
  source.addEventListener("open", () => setConn("live", "● live"));
  source.addEventListener("event", (message) => {
    const next = JSON.parse(message.data);
    offset = next.server_time - Date.now();
    draw(next, frame);
    frame = next;
    tick();
    if (next.event.status === "finished") {
      source.close();
      setConn("over", "event over");
    }
  });
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.CLOSED) {
      if (conn.dataset.state !== "over") setConn("closed", "◌ not live: reload the page");
    } else {
      setConn("reconnecting", "◌ reconnecting…");
    }
  });
}

draw(frame, null);
if (frame.event.status === "finished") setConn("over", "event over");
else follow();
tick();
setInterval(tick, 250);

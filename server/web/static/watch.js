// A race's page kept live: the SSE stream of GET /races/{race}/events (docs/protocol.md, "Live race
// events over SSE") folded into the racers' table, the clock and, at the end, the result and replays.

import { drawTable, statusText } from "./table.js";
import { showFinal } from "./final.js";
import { Replay } from "./replay.js";

const state = JSON.parse(document.getElementById("state").textContent);
const table = document.getElementById("racers");
const clock = document.getElementById("clock");
const conn = document.getElementById("conn");
const raceStatus = document.getElementById("race-status");
const announcer = document.getElementById("announce");
const final = document.getElementById("final");
const variantName = state.variant_name;
const replay = new Replay(document.getElementById("replay"));

let race = state.race;
let lines = new Map(state.progress.map((line) => [line.seat, line]));
let version = state.version;
let offset = state.server_time - Date.now(); // the server's clock less ours
let leader = leaderOf(lines);
let lastLeaderNews = 0;

function leaderOf(map) {
  return [...map.values()].find((line) => line.rank === 1) || null;
}

function say(text) {
  announcer.textContent = text;
}

function setConn(kind, text) {
  conn.dataset.state = kind;
  conn.textContent = text;
}

function setStatus(status) {
  race = { ...race, status };
  raceStatus.dataset.status = status;
  raceStatus.textContent = status;
}

/** Tell screen readers what matters, not every card: finishes, give-ups and (at most every 5 s) the lead. */
function announce(before, after) {
  const news = [];
  for (const line of after.values()) {
    const old = before.get(line.seat);
    if (old && old.status !== line.status && ["finished", "gave_up", "blocked"].includes(line.status)) {
      news.push(`${line.name} ${statusText(line.status)}, place ${line.rank}.`);
    }
  }
  const now = leaderOf(after);
  if (race.status === "running" && now && (!leader || leader.seat !== now.seat) && Date.now() - lastLeaderNews > 5000) {
    news.push(`${now.name} leads with ${now.home} of ${now.total} cards home.`);
    lastLeaderNews = Date.now();
  }
  leader = now;
  if (news.length) say(news.join(" "));
}

function apply(players, full) {
  const before = lines;
  lines = full ? new Map() : new Map(lines);
  for (const line of players) lines.set(line.seat, line);
  announce(before, lines);
  drawTable(table, lines, version, state.accounts);
}

function tick() {
  const now = Date.now() + offset;
  const left = (ms) => {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  };
  if (race.status === "lobby") clock.textContent = "waiting for the start";
  else if (race.status === "finished") clock.textContent = "";
  else if (race.starts_at && now < race.starts_at) clock.textContent = `starts in ${left(race.starts_at - now)}`;
  else if (race.ends_at) {
    if (race.status === "countdown") setStatus("running");
    clock.textContent = `${left(race.ends_at - now)} left`;
  }
}

function finish(results, dealText, secretText) {
  setStatus("finished");
  const winner = results.standings[0];
  say(winner ? `The race is over: ${winner.name} is first with ${winner.home} of ${winner.total} cards home.`
    : "The race is over.");
  showFinal(final, results, dealText, secretText, variantName, replay, state.replay);
  tick();
}

function connect() {
  // The page was rendered at `version`: the stream starts from there; a reconnect sends Last-Event-ID.
  setConn("connecting", "◌ connecting…"); // the page's own words are for a browser without JavaScript
  const source = new EventSource(`${state.events}?last_version=${version}`);
  source.addEventListener("open", () => setConn("live", "● live"));
  source.addEventListener("welcome", (event) => {
    const msg = JSON.parse(event.data);
    race = msg.race;
    offset = msg.server_time - Date.now();
    version = msg.version;
    setStatus(msg.race.status);
    if (!msg.resumed) apply(msg.progress, true);
    table.dataset.resumed = String(msg.resumed);
    if (msg.resumed) table.dataset.resumedFrom = String(msg.version);
    setConn("live", msg.resumed ? "● live (caught up)" : "● live");
  });
  source.addEventListener("progress", (event) => {
    const msg = JSON.parse(event.data);
    version = Math.max(version, msg.version);
    if (msg.race_status !== race.status && race.status !== "finished") {
      if (msg.race_status === "running" && race.status !== "running") say("The race is on.");
      setStatus(msg.race_status);
    }
    apply(msg.players, msg.full);
  });
  source.addEventListener("countdown", (event) => {
    const msg = JSON.parse(event.data);
    race = { ...race, starts_at: msg.starts_at, ends_at: msg.ends_at };
    offset = msg.server_time - Date.now();
    setStatus("countdown");
    say("The race is starting.");
  });
  source.addEventListener("finished", (event) => {
    source.close(); // the stream is over: no reconnect
    setConn("over", "race over");
    const msg = JSON.parse(event.data);
    finish(msg.results, msg.deal_text, msg.secret_text);
  });
  source.addEventListener("race_error", (event) => {
    source.close();
    const msg = JSON.parse(event.data);
    setConn("gone", `race gone (${msg.code})`);
    say(msg.message);
  });
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.CLOSED) {
      if (conn.dataset.state !== "over") setConn("closed", "◌ not live: reload the page");
    } else {
      setConn("reconnecting", "◌ reconnecting…");
    }
  });
}

if (table) drawTable(table, lines, version, state.accounts);
if (state.results) {
  setConn("over", "race over");
  showFinal(final, state.results, state.deal_text, state.secret_text, variantName, replay, state.replay);
} else {
  connect();
}
tick();
setInterval(tick, 250);

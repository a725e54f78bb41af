// The play page: who you are, finding or joining a race, and the race itself (docs/play.md).

import { moveWords } from "./cards.js";
import { Board } from "./play_board.js";
import { api, Link, store } from "./play_net.js";
import { drawTable, el } from "./table.js";
import { findEventRace } from "./play_event.js";
import { finish, setUpEnd } from "./play_end.js";
import { setUpFinding } from "./play_find.js";

const $ = (id) => document.getElementById(id);
const SETTINGS = JSON.parse($("settings").textContent);
const page = { link: null, race: null, seat: null, lines: new Map(), offset: 0, startsAt: null, endsAt: null,
  creator: null, autoReady: false, results: null, me: null, giveUpAsked: false };

const say = (words) => { $("say").textContent = words; };
const moveSay = (words, refused = false) => {
  $("move-say").textContent = words;
  $("move-say").dataset.refused = String(refused);
};
const board = new Board($("play-board"), (text) => move(text), moveSay);

// ----------------------------------------------------------------- who you are
function accountName() {
  const key = store.key();
  return key ? key.slice(0, key.indexOf(".")) : null;
}

async function showWho() {
  const key = store.key();
  $("forget-key").hidden = !key;
  for (const id of ["register-form", "key-form", "guest-form"]) $(id).hidden = Boolean(key);
  $("challenges").hidden = !key;
  if (!key) {
    page.me = null;
    $("who-line").textContent = "You play as a guest (unrated) under the name below, or with an account.";
    return;
  }
  try {
    page.me = (await api("GET", `/players/${encodeURIComponent(accountName())}/key`, undefined, key)).name;
    $("who-line").textContent = `You play as ${page.me} (your account key is kept in this browser only).`;
  } catch (error) {
    $("who-line").textContent = `The kept key was refused (${error.message}): use your key again, or forget it.`;
  }
}

$("register-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    const answer = await api("POST", "/players", { name: $("register-name").value.trim() });
    store.setKey(answer.key);
    $("key-text").textContent = answer.key;
    $("key-shown").hidden = false;
    say(`Registered ${answer.name}.`);
    showWho();
  } catch (error) { say(`Not registered: ${error.message}`); }
});

$("key-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const key = $("key-input").value.trim();
  try {
    const answer = await api("GET", `/players/${encodeURIComponent(key.slice(0, key.indexOf(".")))}/key`, undefined, key);
    store.setKey(key);
    $("key-input").value = "";
    say(`Welcome back, ${answer.name}.`);
    showWho();
  } catch (error) { say(`That key was refused: ${error.message}`); }
});

$("forget-key").addEventListener("click", () => {
  store.setKey(null);
  $("key-shown").hidden = true;
  say("The key is gone from this browser.");
  showWho();
});

function guestName() {
  return store.key() ? undefined : ($("guest-name").value.trim() || undefined);
}

// ----------------------------------------------------------------- joining
/** Join a race: {race} plus a token (a seat of ours) or a name; autoReady says ready once in. */
function join(hello, { autoReady = false, creator = null } = {}) {
  if (page.link) page.link.close();
  Object.assign(page, { race: null, seat: null, lines: new Map(), results: null, startsAt: null, endsAt: null,
    autoReady, creator, giveUpAsked: false });
  $("lobby-pick").hidden = true;
  $("race").hidden = false;
  $("final").hidden = true;
  board.show(null);
  moveSay("");
  // What an earlier race's link still says (its close, a late frame) is not about this race.
  page.link = null;
  const link = new Link(hello, (f) => page.link === link && frame(f), (state) => {
    if (page.link !== null && page.link !== link) return;
    $("conn").dataset.state = state;
    if (state === "closed" && !page.race) leaveRace();
    $("conn").textContent = { live: "● live", connecting: "◌ connecting…", reconnecting: "◌ reconnecting…",
      over: "race over", closed: "closed" }[state] || state;
  });
  page.link = link;
}

function leaveRace() {
  page.link?.close();
  page.link = null;
  store.setSeat(null);
  history.replaceState(null, "", "/play");
  $("race").hidden = true;
  $("lobby-pick").hidden = false;
}

$("join-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const code = $("join-code").value.trim();
  if (code) join({ race: code, name: guestName() });
});

$("create-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    const made = await api("POST", "/races", { variant: $("create-variant").value, seats: Number($("create-seats").value),
      time_limit: Number($("create-clock").value), hints: $("create-hints").checked });
    join({ race: made.race.id, name: guestName() }, { creator: made.creator_token });
    say(`Race ${made.race.code} made: give its code to the others.`);
  } catch (error) { say(`No race made: ${error.message}`); }
});

// ----------------------------------------------------------------- frames
function frame(f) {
  const handler = HANDLERS[f.type];
  if (handler) handler(f);
}

const HANDLERS = {
  welcome(f) {
    page.race = f.race;
    page.seat = f.seat;
    page.offset = f.server_time - Date.now();
    store.setSeat({ race: f.race.id, code: f.race.code, token: f.token });
    history.replaceState(null, "", `/play?race=${encodeURIComponent(f.race.code)}`);
    if (!f.resumed) page.lines = new Map(f.progress.map((l) => [l.seat, l]));
    if (f.race.starts_at) Object.assign(page, { startsAt: f.race.starts_at, endsAt: f.race.ends_at });
    $("race-code").textContent = f.race.code;
    const name = SETTINGS.variants.find((v) => v.key === f.race.variant)?.name || f.race.variant;
    $("race-rules").textContent = `${name} · ${f.race.seats} seats · ${Math.round(f.race.time_limit / 60)} min`
      + `${f.race.rated ? " · rated" : ""}${f.race.hints ? " · hints" : ""}`;
    $("watch-link").href = `/watch/${encodeURIComponent(f.race.code)}`;
    if (f.view) board.show(f.view);
    table(f.version, f.race.status);
    if (f.race.status === "lobby" && page.autoReady) page.link.send({ type: "ready", ready: true });
    page.autoReady = false;
  },
  progress(f) {
    if (f.full) page.lines = new Map();
    for (const line of f.players) page.lines.set(line.seat, line);
    table(f.version, f.race_status);
  },
  countdown(f) {
    page.offset = f.server_time - Date.now();
    Object.assign(page, { startsAt: f.starts_at, endsAt: f.ends_at });
    if (f.view) board.show(f.view);
    say("The race starts.");
    buttons();
  },
  ack(f) {
    board.show(f.view);
    const words = { blocked: "No legal move is left: undo, or give up.", finished: "Every card is home: you won!" };
    moveSay(words[f.status] || "");
    if (f.status === "finished") say("Every card is home: you won!");
  },
  reject(f) { moveSay(f.message, true); },
  gave_up() { say("You gave up; the race goes on for the others."); },
  left() {
    leaveRace();
    say("You gave your seat back.");
  },
  finished(f) { finish(f.results); },
  hint(f) {
    moveSay(f.move ? `Hint: ${moveWords(f.move)}${f.winning ? ` (wins in ${f.remaining})` : ""}.` : "Hint: no legal move.");
  },
  error(f) { (f.ref === "move" || f.ref === "hint" ? moveSay : say)(f.message, true); },
};

function myLine() {
  return page.lines.get(page.seat);
}

function table(version, raceStatus) {
  drawTable($("racers"), page.lines, version);
  raceIs(raceStatus);
}

function raceIs(raceStatus) {
  if (page.race) page.race.status = raceStatus;
  $("race").dataset.status = raceStatus;
  $("race-status").textContent = { lobby: "in the lobby", countdown: "starting", running: "racing",
    finished: "over" }[raceStatus] || raceStatus;
  buttons();
}

function buttons() {
  const status = page.race?.status;
  const racing = status === "running" || status === "countdown";
  const mine = myLine()?.status;
  const show = (act, on) => { document.querySelector(`[data-act="${act}"]`).hidden = !on; };
  show("ready", status === "lobby");
  show("start", status === "lobby" && page.creator);
  show("leave", status === "lobby");
  for (const act of ["draw", "turn", "undo", "give_up"]) show(act, racing && !["finished", "gave_up"].includes(mine));
  show("undo", racing && page.race?.undo && !["finished", "gave_up"].includes(mine));
  show("hint", racing && page.race?.hints);
  show("confirm_give_up", racing && page.giveUpAsked);
  const ready = document.querySelector('[data-act="ready"]');
  ready.firstChild.textContent = mine === "ready" ? "Not ready " : "Ready ";
}

// ----------------------------------------------------------------- acting
function move(text) {
  if (!page.link || !["running", "countdown"].includes(page.race?.status)) return moveSay("Moves count once the race is running.");
  moveSay("");
  page.link.move(text);
}

const ACTS = {
  ready: () => page.link?.send({ type: "ready", ready: myLine()?.status !== "ready" }),
  start: () => page.creator && page.link?.send({ type: "start", creator_token: page.creator }),
  leave: () => page.link?.send({ type: "leave" }),
  draw: () => board.key(" "),
  turn: () => board.key("r"),
  undo: () => move("U"),
  hint: () => page.link?.send({ type: "hint" }),
  give_up: () => { page.giveUpAsked = true; buttons(); moveSay("Give up? Press y (or the button) to confirm."); },
  confirm_give_up: () => {
    if (!page.giveUpAsked) return;
    page.giveUpAsked = false;
    page.link?.send({ type: "give_up" });
    buttons();
  },
};
const KEYS = { s: "ready", b: "start", u: "undo", h: "hint", g: "give_up", y: "confirm_give_up" };

$("actions").addEventListener("click", (e) => {
  const act = e.target.closest("[data-act]")?.dataset.act;
  if (act) ACTS[act]();
});

document.addEventListener("keydown", (e) => {
  if ($("race").hidden || e.ctrlKey || e.metaKey || e.altKey || e.target.closest("input, select, textarea")) return;
  // Space draws, as in the terminal; on a focused button outside the board it presses the button
  // (Enter presses a card of the board).
  if (e.key === " " && e.target.closest("button") && !e.target.closest("#play-board")) return;
  const act = KEYS[e.key];
  if (act) { ACTS[act](); e.preventDefault(); return; }
  if (e.key !== "y" && page.giveUpAsked) { page.giveUpAsked = false; buttons(); }
  if (board.key(e.key)) e.preventDefault();
});

// ----------------------------------------------------------------- the clock
setInterval(() => {
  const now = Date.now() + page.offset;
  if (!page.endsAt || page.results) return void ($("clock").textContent = "");
  if (page.race?.status === "countdown" && now >= page.startsAt) raceIs("running"); // (no frame says so)
  const left = page.startsAt > now ? page.startsAt - now : page.endsAt - now;
  const s = Math.max(0, Math.ceil(left / 1000));
  $("clock").textContent = `${page.startsAt > now ? "starts in " : ""}${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`
    + (page.startsAt > now ? "" : " left");
}, 250);

// ----------------------------------------------------------------- the start
setUpEnd({ page, join, say, leaveRace, raceIs });
setUpFinding({ join, guestName, leaveRace });
for (const select of document.querySelectorAll("select.variants")) {
  select.replaceChildren(...SETTINGS.variants.map((v) => el("option", { value: v.key }, `${v.name} (${v.columns} columns)`)));
}
for (const select of document.querySelectorAll("select.clocks")) {
  select.replaceChildren(...SETTINGS.clocks.map((c) => el("option", { value: String(c) }, `${c / 60} min`)));
  select.value = "300";
}

const params = new URLSearchParams(location.search);
showWho().then(() => {
  const seat = store.seat();
  const race = params.get("race");
  if (params.get("event")) {
    findEventRace(params.get("event"), { join, say: (w) => { $("event-status").textContent = w; }, page });
    $("event").hidden = false;
  } else if (seat && (!race || [seat.race, seat.code].includes(race.toUpperCase()) || seat.race === race)) {
    join({ race: seat.race, token: seat.token });
  } else if (race && (store.key() || guestName())) {
    join({ race, name: guestName() });
  } else if (race) {
    $("join-code").value = race;
    say("Give yourself a guest name (or use your account), then Join.");
    $("guest-name").focus();
  }
});

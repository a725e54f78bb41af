// The end screen of the play page: the standings with ranks, the rating change of a rated race
// (read from the account's history once the results are applied, as the terminal's end screen does:
// client_cli/rating_change.py), the rematch (asked about every second, docs/protocol.md "Rematches"),
// "Find another" and "Back to the lobby".

import { api, sleep, store } from "./play_net.js";
import { el, statusText } from "./table.js";

const $ = (id) => document.getElementById(id);
let page, join, say, leaveRace, raceIs;

/** Wire the end screen to the page: its state and the acts it needs. */
export function setUpEnd(context) {
  ({ page, join, say, leaveRace, raceIs } = context);
}

export function finish(results) {
  page.results = results;
  store.setSeat(null);
  raceIs("finished");
  $("final").hidden = false;
  $("standings").replaceChildren(...results.standings.map((s) => el("li", { "data-seat": String(s.seat),
    "data-rank": String(s.rank) }, `${s.rank}. ${s.name}: ${s.status === "racing" ? "still racing at the end"
    : statusText(s.status)}, ${s.home}/${s.total} cards home`)));
  say(`The race is over. You placed ${results.standings.find((s) => s.seat === page.seat)?.rank ?? "–"}.`);
  $("rematch").hidden = true;
  if (page.me) {
    if (page.race.rated) ratingChange(page.race.id);
    if (results.revealed) rematchWatch(page.race.id);
  }
  $("final-title").focus?.();
}

async function ratingChange(race) {
  for (let i = 0; i < 60 && page.race?.id === race; i++) {
    const history = await api("GET", `/players/${encodeURIComponent(page.me)}/races?limit=5`).catch(() => null);
    const entry = history?.races.find((r) => r.race === race && r.rating_after !== null);
    if (entry) {
      const change = entry.rating_after - entry.rating_before;
      $("rating-change").textContent = `Your rating: ${entry.rating_before} → ${entry.rating_after} (${change >= 0 ? "+" : ""}${change})`;
      return;
    }
    await sleep(1000);
  }
}

/** Ask about the rematch every second while the end screen shows; move into the new race once made. */
async function rematchWatch(race) {
  $("rematch-status").textContent = "";
  while (page.race?.id === race && page.results) {
    let offer;
    try {
      offer = await api("GET", `/races/${race}/rematch`);
    } catch (error) {
      if (error.code === "no_rematch") return;
      await sleep(1000);
      continue;
    }
    $("rematch").hidden = false;
    if (offer.status === "accepted" && offer.new_race) {
      join({ race: offer.new_race }, { autoReady: true });
      say(`Rematch: race ${offer.code}.`);
      return;
    }
    const others = offer.accepted.filter((n) => n.toLowerCase() !== page.me.toLowerCase());
    $("rematch-status").textContent = offer.status === "open"
      ? `Rematch offered by ${offer.accepted.join(", ")}${others.length === offer.accepted.length ? ": press Rematch to accept" : ": waiting for the others"}.`
      : offer.status === "declined" ? `${offer.declined.join(", ")} declined the rematch.` : "";
    await sleep(1000);
  }
}

$("rematch").addEventListener("click", async () => {
  try {
    const offer = await api("POST", `/races/${page.race.id}/rematch`, { accept: true }, store.key());
    if (offer.status === "accepted" && offer.new_race) join({ race: offer.new_race }, { autoReady: true });
    else $("rematch-status").textContent = "Rematch offered: waiting for the others.";
  } catch (error) { $("rematch-status").textContent = `No rematch: ${error.message}`; }
});

$("back").addEventListener("click", () => leaveRace());

$("another").addEventListener("click", () => {
  const race = page.race;
  leaveRace();
  $("seek-variant").value = race.variant;
  $("seek-seats").value = String(Math.min(8, Math.max(2, race.seats)));
  const clock = [...$("seek-clock").options].find((o) => Number(o.value) === race.time_limit);
  if (clock) $("seek-clock").value = clock.value;
  $("seek-rated").checked = Boolean(race.rated && store.key());
  $("seek-form").requestSubmit();
});

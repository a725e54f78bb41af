// Finding a race on the play page: a seek on a socket of its own (docs/protocol.md, "Seeks"), and
// challenges sent and answered (docs/protocol.md, "Challenges": asked about every second, as the
// terminal's `thieves challenge` and `thieves challenges --wait` do).

import { api, openSocket, sleep, store } from "./play_net.js";
import { el } from "./table.js";

const $ = (id) => document.getElementById(id);
let join, guestName, leaveRace;

/** Wire the forms to the page: join(hello, options) moves into a race; guestName() the name typed;
 * leaveRace() goes back to the lobby. */
export function setUpFinding(context) {
  ({ join, guestName, leaveRace } = context);
  setInterval(pollChallenges, 1500);
}

let seeker = null;
let matched = false;
// A matched seek's socket stays open while its race is joined (a partner who does not come puts the
// seek back: "requeued" arrives on it); a new seek ("Find another") closes it first instead of being
// ignored until the server closes it.
$("seek-form").addEventListener("submit", (e) => {
  e.preventDefault();
  if (seeker && !matched) return;
  seeker?.close();
  matched = false;
  const key = store.key() || undefined;
  const seek = { type: "seek", protocol: 1, variant: $("seek-variant").value, seats: Number($("seek-seats").value),
    time_limit: Number($("seek-clock").value), rated: $("seek-rated").checked, key, name: key ? undefined : guestName() };
  $("seek-status").textContent = "Looking for a race…";
  $("seek-cancel").hidden = false;
  const socket = seeker = openSocket((f) => {
    if (f.type === "seeking") {
      if (f.requeued && matched) {  // the partner did not come: the seek waits again (as the terminal's)
        matched = false;
        leaveRace();
      }
      $("seek-status").textContent = `Looking for a race in ${f.pool}: ${f.waiting} waiting, rating ${f.rating} ±${f.gap}.`;
    } else if (f.type === "matched") {
      matched = true;
      $("seek-status").textContent = `Found: race ${f.code} with ${f.names.join(", ")}.`;
      join({ race: f.race, token: f.token }, { autoReady: true });
    } else if (f.type === "seek_cancelled" && f.cancelled) {
      seeker?.close();
    } else if (f.type === "error" && f.code === "already_seeking") {
      // The player's previous seek has not left its pool yet (docs/protocol.md, "Seeks"): ask again.
      $("seek-status").textContent = `${f.message}: trying again…`;
      setTimeout(() => { if (seeker === socket) socket.sendFrame(seek); }, 1000);
    } else if (f.type === "error") {
      $("seek-status").textContent = f.message;
    }
  }, () => {
    if (seeker !== socket) return;  // an earlier seek's socket, closed for a new one
    seeker = null;
    $("seek-cancel").hidden = true;
  });
  socket.onopen = () => socket.sendFrame(seek);
});
$("seek-cancel").addEventListener("click", () => {
  seeker?.sendFrame({ type: "seek_cancel" });
  $("seek-status").textContent = "Stopped looking.";
});

async function pollChallenges() {
  if (!store.key() || !$("race").hidden) return;
  try {
    const list = await api("GET", "/challenges", undefined, store.key());
    $("incoming").replaceChildren(...list.incoming.map((c) => el("li", { "data-id": c.id },
      `${c.challenger} challenges you: ${c.variant}, ${Math.round(c.time_limit / 60)} min${c.rated ? ", rated" : ""} `,
      el("button", { type: "button", "data-answer": "accept" }, "Accept"), " ",
      el("button", { type: "button", "data-answer": "decline" }, "Decline"))));
  } catch (error) { /* asked again in a moment */ }
}
$("incoming").addEventListener("click", async (e) => {
  const answer = e.target.closest("[data-answer]")?.dataset.answer;
  const id = e.target.closest("[data-id]")?.dataset.id;
  if (!answer || !id) return;
  try {
    const c = await api("POST", `/challenges/${id}/${answer}`, {}, store.key());
    if (c.status === "accepted") join({ race: c.race }, { autoReady: true });
    else $("challenge-status").textContent = "Declined.";
  } catch (error) { $("challenge-status").textContent = error.message; }
});

$("challenge-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  try {
    let c = await api("POST", "/challenges", { to: $("challenge-to").value.trim(), variant: $("challenge-variant").value,
      time_limit: Number($("challenge-clock").value), rated: $("challenge-rated").checked }, store.key());
    $("challenge-status").textContent = `Challenge sent to ${c.challenged}: waiting for the answer…`;
    while (c.status === "open") {
      await sleep(1000);
      c = await api("GET", `/challenges/${c.id}`, undefined, store.key());
    }
    if (c.status === "accepted") join({ race: c.race }, { autoReady: true });
    else $("challenge-status").textContent = `The challenge was ${c.status}.`;
  } catch (error) { $("challenge-status").textContent = error.message; }
});

// An event entrant's page (/play?event=ID): it looks at the event every second and takes the entrant
// into each heat (a round's race) or pairing (an arena's race) as it opens, as `thieves event play`
// does (client_cli/commands/event.py, next_race): the same rule, the same public endpoints.

import { api, sleep, store } from "./play_net.js";

/** The race id the account should play now, or null. */
function nextRace(info, standings, me, played) {
  if (info.pairing) {
    const mine = standings.lines.find((l) => l.account === me);
    return mine && mine.status === "playing" && mine.race && !played.has(mine.race) ? mine.race : null;
  }
  if (!info.schedule.length || !["open", "running"].includes(info.round_state)) return null;
  const heat = info.schedule[info.schedule.length - 1].heats.find((h) => h.entrants.includes(me));
  return heat && !played.has(heat.race) ? heat.race : null;
}

export async function findEventRace(event, { join, say, page }) {
  const key = store.key();
  if (!key) return say("An event is played with an account: register or use your key above, then reload.");
  const me = key.slice(0, key.indexOf("."));
  const played = new Set();
  for (;;) {
    try {
      const info = await api("GET", `/events/${encodeURIComponent(event)}`);
      const standings = await api("GET", `/events/${encodeURIComponent(event)}/standings`);
      if (["finished", "cancelled"].includes(info.status)) return say(`${info.name} is ${info.status}.`);
      const busy = page.link && !page.results && !page.link.over;
      const race = busy ? null : nextRace(info, standings, me, played);
      if (race) {
        played.add(race);
        say(`Your race in ${info.name} is open: joining it.`);
        join({ race });
      } else if (!busy) {
        const mine = standings.lines.find((l) => l.account === me);
        say(mine ? `Waiting for your next race in ${info.name} (${info.status}).`
          : `You have not entered ${info.name} (enter it with your account).`);
      }
    } catch (error) { say(error.message); }
    await sleep(1000);
  }
}

// The racers' table: one row per player, in place order (the server's own template draws the same rows).

/** Every status's [sign, words], as the server's own rows show them: the page carries them
 * (#status-words, from server/web/render.py), so no status is called two things. */
const LEGEND = JSON.parse(document.getElementById("status-words")?.textContent || "{}");

function legend(status) {
  return LEGEND[status] || ["", status.replaceAll("_", " ")];
}

/** A status as a sign (hidden from screen readers) and words: colour is never the only signal. */
export function statusCell(cell, status, final = false) {
  const [sign, words] = legend(final && status === "racing" ? "final_racing" : status);
  cell.className = `status status-${status}`;
  cell.replaceChildren(el("span", { class: "sign", "aria-hidden": "true" }, sign), ` ${words}`);
}

export function statusText(status) {
  return legend(status)[1];
}

/** A small element builder: el("td", {class: "x"}, "text", child, ...). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

export function helpedMark(helped) {
  return helped ? el("abbr", { class: "helped", title: "played with help (took a hint)" }, "†") : null;
}

/** Redraw the table body from the lines (a Map seat -> PlayerProgress); `accounts` (seat -> account, from
 * the page's state) links the names of players with an account to their pages. */
export function drawTable(table, lines, version, accounts = {}) {
  const body = table.tBodies[0];
  const rows = [...lines.values()].sort((a, b) => a.rank - b.rank || a.seat - b.seat);
  if (!rows.length) {
    body.replaceChildren(el("tr", { class: "empty" }, el("td", { colspan: "5" }, "Nobody has joined yet.")));
  } else {
    body.replaceChildren(...rows.map((line) => row(line, accounts[String(line.seat)])));
  }
  table.dataset.version = String(version);
}

/** A player's name: a link to its page when it has an account (a guest's is only a name). */
export function playerLink(name, account) {
  return account ? el("a", { href: `/player/${encodeURIComponent(name)}` }, name) : name;
}

function row(line, account) {
  const bar = el("progress", { max: String(line.total), value: String(line.home),
    "aria-label": `${line.name}: ${line.home} of ${line.total} cards home` });
  const status = el("td");
  statusCell(status, line.status);
  const name = el("th", { scope: "row", class: "name" }, playerLink(line.name, account));
  const mark = helpedMark(line.helped);
  if (mark) name.append(" ", mark);
  return el("tr", { "data-seat": String(line.seat), "data-home": String(line.home), "data-status": line.status },
    el("td", { class: "rank" }, String(line.rank)), name,
    el("td", { class: "home" }, bar, " ", el("span", { class: "count" }, `${line.home}/${line.total}`)),
    status, el("td", { class: "moves wide" }, String(line.moves)));
}

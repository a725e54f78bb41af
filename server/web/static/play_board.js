// The player's own board: drawn from the server's View, and turned back into moves of the notation
// (docs/notation.md) by click-click, drag and drop (mouse and touch: pointer events) and the
// terminal's keys (client_cli/keymap.py: 1..9 0 ! @ # are columns 1..13, w the waste, f home,
// space draws, r turns the waste over). The page checks no rule: the server's ack or reject is the
// answer, shown within its round trip.

import { cardFace, cardName } from "./cards.js";
import { el } from "./table.js";

export const COLUMN_KEYS = "1234567890!@#";
const DRAG_PIXELS = 6;

const letter = (i) => String.fromCharCode(97 + i);
const columnOf = (place) => place.charCodeAt(0) - 97;

function placeWords(place) {
  if (place === "W") return "the waste";
  if (place === "F") return "home";
  return `column ${columnOf(place) + 1}`;
}

export class Board {
  /** node: the board's element; play(text): send a move; say(words): tell the player. */
  constructor(node, play, say) {
    Object.assign(this, { node, play, say, view: null, picked: null, drag: null, dragged: false });
    node.addEventListener("click", (e) => this.clicked(e));
    node.addEventListener("pointerdown", (e) => this.down(e));
    node.addEventListener("pointermove", (e) => this.moved(e));
    node.addEventListener("pointerup", (e) => this.up(e));
    node.addEventListener("pointercancel", () => this.endDrag());
  }

  show(view) {
    this.view = view;
    this.node.dataset.moves = view ? String(view.moves) : "";
    const focused = document.activeElement?.dataset?.focus;
    this.draw();
    if (focused) this.node.querySelector(`[data-focus="${focused}"]`)?.focus();
  }

  draw() {
    const v = this.view;
    if (!v) return this.node.replaceChildren();
    const home = v.foundations.map((top, i) => el("span", { class: `card ${top ? `suit-${top[1]}` : "empty"}` },
      top ? cardFace(top) : ""));
    const homeWords = v.foundations.map((top) => (top ? cardName(top) : "empty")).join(", ");
    const homeButton = el("button", { type: "button", class: "home pile", "data-place": "F", "data-focus": "F" },
      el("span", { class: "sr-only" }, `Home (key f), ${v.home} of ${v.total} cards: ${homeWords}`),
      el("span", { class: "faces", "aria-hidden": "true" }, ...home));
    const stock = el("button", { type: "button", class: "stock", "data-place": "S", "data-focus": "S",
      "aria-label": v.stock ? `Stock, ${v.stock} cards: draw (space)` : "Stock empty: turn the waste over (r)" },
    v.stock ? String(v.stock) : "↺");
    const shown = v.waste.slice(-5);
    const waste = el("div", { class: "waste pile", role: "group",
      "aria-label": `Waste, ${v.waste.length} cards (key w)` }, ...shown.map((c, i) => i === shown.length - 1
      ? this.card(c, "W", 1, "the waste") : el("span", { class: `card suit-${c[1]}`, "aria-hidden": "true" }, cardFace(c))));
    if (!shown.length) waste.append(el("span", { class: "card empty" }, el("span", { class: "sr-only" }, "empty")));
    const cols = v.tableau.map((col, i) => {
      const place = letter(i);
      const cards = col.length ? col.map((c, j) => c === "??"
        ? el("li", { class: "card suit-down", "aria-label": "face-down card" }, "🂠")
        : el("li", {}, this.card(c, place, col.length - j, `column ${i + 1}`)))
        : [el("li", {}, el("button", { type: "button", class: "card empty", "data-place": place, "data-focus": place,
          "aria-label": `Column ${i + 1}, empty` }))];
      return el("div", { class: "col", role: "group", "aria-label": `Column ${i + 1} (key ${COLUMN_KEYS[i]}), ${col.length} cards` },
        el("span", { class: "key", "aria-hidden": "true" }, COLUMN_KEYS[i] || ""), el("ol", {}, ...cards));
    });
    const top = el("div", { class: "top" }, homeButton, stock, waste);
    const grid = el("div", { class: "cols" }, ...cols);
    this.node.style.setProperty("--n", String(v.tableau.length)); // (the columns' grid and the cards' size)
    this.node.replaceChildren(top, grid);
    this.mark();
  }

  card(text, place, count, where) {
    // The name read out is in the button's text (not an aria-label that would differ from what is seen).
    return el("button", { type: "button", class: `card suit-${text[1]}`, "data-place": place,
      "data-count": String(count), "data-focus": `${place}${count}` },
    el("span", { "aria-hidden": "true" }, cardFace(text)), el("span", { class: "sr-only" }, `${cardName(text)}, ${where}`));
  }

  /** Show the selection (and tell a screen reader). */
  mark() {
    for (const node of this.node.querySelectorAll("[aria-pressed]")) node.removeAttribute("aria-pressed");
    for (const node of this.node.querySelectorAll(".picked")) node.classList.remove("picked");
    if (!this.picked) return;
    const { place, count } = this.picked;
    const nodes = [...this.node.querySelectorAll(`[data-place="${place}"]`)].filter((n) => n.dataset.count
      && Number(n.dataset.count) <= count);
    for (const node of nodes) node.classList.add("picked");
    nodes[0]?.setAttribute("aria-pressed", "true");
  }

  cards(place) {
    if (place === "W") return this.view.waste.length;
    return (this.view.tableau[columnOf(place)] || []).length;
  }

  /** A place picked (by click, tap, Enter or key); count: cards from a clicked card to the top. */
  pick(place, count = 1) {
    if (!this.view) return;
    if (place === "S") {
      this.cancel();
      this.play(this.view.stock ? "S" : "R");
      return;
    }
    const sel = this.picked;
    if (!sel) {
      if (place === "F") return this.say("Pick a card first, then home (f).");
      if (!this.cards(place)) return this.say(`${placeWords(place)} is empty.`);
      this.picked = { place, count: place === "W" ? 1 : count };
      this.mark();
      this.say(`Picked ${placeWords(place)}${this.picked.count > 1 ? ` (${this.picked.count} cards)` : ""}: now where it goes.`);
      return;
    }
    if (place === "W" && sel.place !== "W") {
      this.picked = null;
      return this.pick("W");
    }
    this.picked = null;
    this.mark();
    if (place === sel.place || place === "F") return this.play(`${sel.place}F`);
    this.play(`${sel.count > 1 ? sel.count : ""}${sel.place}${place}`);
  }

  cancel() {
    this.picked = null;
    this.mark();
  }

  /** A key of the terminal's keymap; true when it was one. */
  key(k) {
    if (!this.view) return false;
    const column = COLUMN_KEYS.indexOf(k);
    if (column >= 0 && column < this.view.tableau.length) this.pick(letter(column));
    else if (k === "w") this.pick("W");
    else if (k === "f") this.pick("F");
    else if (k === " ") this.pick("S");
    else if (k === "r") { this.cancel(); this.play("R"); }
    else if (k === "Escape") this.cancel();
    else return false;
    return true;
  }

  target(e) {
    return e.target.closest?.("[data-place]");
  }

  clicked(e) {
    const node = this.target(e);
    if (this.dragged) { this.dragged = false; return; }
    if (node) this.pick(node.dataset.place, Number(node.dataset.count || 1));
  }

  down(e) {
    const node = this.target(e);
    if (!node || !node.dataset.count || e.button > 0) return;
    this.drag = { node, x: e.clientX, y: e.clientY, ghost: null };
  }

  moved(e) {
    const d = this.drag;
    if (!d) return;
    if (!d.ghost && Math.hypot(e.clientX - d.x, e.clientY - d.y) < DRAG_PIXELS) return;
    if (!d.ghost) {
      d.node.setPointerCapture?.(e.pointerId);
      d.ghost = d.node.cloneNode(true);
      d.ghost.classList.add("ghost");
      d.ghost.removeAttribute("data-place");
      document.body.append(d.ghost);
    }
    d.ghost.style.transform = `translate(${e.clientX}px, ${e.clientY}px)`;
  }

  up(e) {
    const d = this.drag;
    if (!d || !d.ghost) return this.endDrag();
    const under = document.elementFromPoint(e.clientX, e.clientY)?.closest("[data-place]");
    this.endDrag();
    this.dragged = true;
    setTimeout(() => { this.dragged = false; }, 0);
    const src = d.node.dataset.place, count = Number(d.node.dataset.count);
    if (!under || under.dataset.place === src || under.dataset.place === "S") return this.say("Dropped nowhere.");
    this.picked = { place: src, count: src === "W" ? 1 : count };
    this.pick(under.dataset.place);
  }

  endDrag() {
    this.drag?.ghost?.remove();
    this.drag = null;
  }
}

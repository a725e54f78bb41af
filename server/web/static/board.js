// A player's board (the protocol's View) drawn as cards: foundations, stock and waste, the columns.

import { cardFace, cardName } from "./cards.js";
import { el } from "./table.js";

const WASTE_SHOWN = 6;

function card(text) {
  const suit = text === "??" ? "down" : text[1];
  return el("li", { class: `card suit-${suit}` }, el("span", { "aria-hidden": "true" }, cardFace(text)),
    el("span", { class: "sr-only" }, cardName(text)));
}

function pile(label, cards, cls) {
  const list = el("ol", { class: `pile ${cls}`, "aria-label": label }, ...cards.map(card));
  if (!cards.length) list.append(el("li", { class: "card empty" }, el("span", { class: "sr-only" }, "empty")));
  return list;
}

/** Replace ``node``'s content with the board of ``view``. */
export function drawBoard(node, view) {
  const foundations = view.foundations.map((top, i) =>
    pile(`Foundation ${i + 1}${top ? "" : ", empty"}`, top ? [top] : [], "foundation"));
  const waste = view.waste.slice(-WASTE_SHOWN);
  const more = view.waste.length - waste.length;
  const top = el("div", { class: "top-row" },
    el("div", { class: "group" }, el("h4", {}, "Home"), el("div", { class: "foundations" }, ...foundations)),
    el("div", { class: "group" }, el("h4", {}, "Stock"),
      el("p", { class: "stock", "aria-label": `${view.stock} cards in the stock` }, `${view.stock}`)),
    el("div", { class: "group" }, el("h4", {}, `Waste${more > 0 ? ` (+${more})` : ""}`),
      pile(`Waste, ${view.waste.length} cards, the last is playable`, waste, "waste")));
  const columns = view.tableau.map((col, i) => {
    const wrap = el("div", { class: "column" }, el("h4", {}, String(i + 1)));
    wrap.append(pile(`Column ${i + 1}, ${col.length} cards, bottom first`, col, "tableau"));
    return wrap;
  });
  node.replaceChildren(top, el("div", { class: "columns" }, ...columns));
}

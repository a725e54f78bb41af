// Cards for people: "Th" is drawn as T♥ and read as "ten of hearts".

const RANKS = { A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
  9: "nine", T: "ten", J: "jack", Q: "queen", K: "king" };
const SUITS = { c: ["♣", "clubs"], d: ["♦", "diamonds"], h: ["♥", "hearts"], s: ["♠", "spades"] };

export function cardName(text) {
  if (text === "??") return "face-down card";
  return `${RANKS[text[0]]} of ${SUITS[text[1]][1]}`;
}

export function cardFace(text) {
  if (text === "??") return "🂠";
  return `${text[0] === "T" ? "10" : text[0]}${SUITS[text[1]][0]}`;
}

/** Column letters of the notation (a = column 1) as the page numbers them. */
function place(letter) {
  if (letter === "W") return "waste";
  if (letter === "F") return "home";
  if (letter === "S") return "stock";
  return `column ${letter.charCodeAt(0) - 96}`;
}

/** A move of the notation (docs/notation.md) in words: "column 3 → home", "draw". */
export function moveWords(move) {
  if (move === "S") return "draw from the stock";
  if (move === "R") return "turn the waste over";
  if (move === "U") return "undo the last move";
  const m = /^(\d*)(.)(.)$/.exec(move);
  if (!m) return move;
  const cards = m[1] ? ` (${m[1]} cards)` : "";
  return `${place(m[2])} → ${place(m[3])}${cards}`;
}

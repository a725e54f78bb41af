// Step through one player's game: the boards come from GET /races/{race}/replay/{seat}.

import { drawBoard } from "./board.js";
import { moveWords } from "./cards.js";

export class Replay {
  constructor(section) {
    this.section = section;
    this.board = section.querySelector("#board");
    this.status = section.querySelector("#replay-status");
    this.slider = section.querySelector("#replay-step");
    this.title = section.querySelector("#replay-title");
    this.data = null;
    this.index = 0;
    for (const button of section.querySelectorAll("button[data-step]")) {
      button.addEventListener("click", () => this.step(button.dataset.step));
    }
    this.slider.addEventListener("input", () => this.show(Number(this.slider.value)));
    section.addEventListener("keydown", (event) => {
      if (event.target === this.slider) return; // the slider's own arrows
      const keys = { ArrowLeft: "back", ArrowRight: "next", Home: "first", End: "last" };
      if (keys[event.key]) {
        event.preventDefault();
        this.step(keys[event.key]);
      }
    });
  }

  async open(url, name) {
    this.section.hidden = false;
    this.title.textContent = `Replay: ${name}`;
    this.status.textContent = `Loading ${name}'s game…`;
    const answer = await fetch(url);
    if (!answer.ok) {
      const body = await answer.json().catch(() => ({}));
      this.status.textContent = `The replay could not be loaded (${body.code || answer.status}).`;
      return;
    }
    this.data = await answer.json();
    this.slider.max = String(this.data.views.length - 1);
    this.slider.setAttribute("aria-valuetext", "start");
    this.show(0);
    this.section.querySelector("button[data-step=next]").focus();
  }

  step(which) {
    if (!this.data) return;
    const last = this.data.views.length - 1;
    const to = { first: 0, back: this.index - 1, next: this.index + 1, last }[which];
    this.show(Math.max(0, Math.min(last, to)));
  }

  show(index) {
    const { views, moves, name, error } = this.data;
    this.index = index;
    const view = views[index];
    this.slider.value = String(index);
    const what = index === 0 ? "the deal as dealt" : moveWords(moves[index - 1]);
    const text = `Step ${index} of ${moves.length}: ${what}. ${view.home} of ${view.total} cards home, ` +
      `${view.moves} moves${view.status === "won" ? ", won" : ""}.`;
    this.slider.setAttribute("aria-valuetext", `step ${index}: ${what}`);
    this.status.textContent = text + (error && index === views.length - 1 ? ` ${error}` : "");
    this.section.dataset.step = String(index);
    this.board.setAttribute("aria-label", `${name}'s board after step ${index}`);
    drawBoard(this.board, view);
  }
}

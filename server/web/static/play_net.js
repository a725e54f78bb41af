// The play page's wire: msgpack frames over /ws (docs/protocol.md), and the JSON endpoints.
//
// One Link is one seat's connection: it says hello (with the seat's token and the table version it
// holds once it has them), keeps the moves not yet answered, and after a drop reconnects and resends
// those above welcome.seq with the same seq, as the protocol's checklist says. The account key goes
// only into the hello frame and same-origin Authorization headers (docs/play.md).

// The vendored codec (static/vendor/msgpack/), a classic script the page loads before its modules.
const { decode, encode } = globalThis.MessagePack;

const KEY = "thieves.key";
const SEAT = "thieves.seat";

export const store = {
  key: () => localStorage.getItem(KEY),
  setKey: (key) => (key ? localStorage.setItem(KEY, key) : localStorage.removeItem(KEY)),
  /** The seat this tab holds (race id, token): sessionStorage, so a reload takes it back. */
  seat: () => JSON.parse(sessionStorage.getItem(SEAT) || "null"),
  setSeat: (seat) => (seat ? sessionStorage.setItem(SEAT, JSON.stringify(seat)) : sessionStorage.removeItem(SEAT)),
};

/** A JSON request to this server; the key, when given, in the Authorization header. Throws an
 * Error carrying the server's code and message for an error answer. */
export async function api(method, path, body, key) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (key) headers.Authorization = `Bearer ${key}`;
  const answer = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit" });
  const data = await answer.json().catch(() => ({}));
  if (!answer.ok) {
    const error = new Error(data.message || `${answer.status}`);
    error.code = data.code || String(answer.status);
    throw error;
  }
  return data;
}

export const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

function socketUrl() {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
}

/** 64-bit integers come as BigInt (useBigInt64, for deal numbers above 2^53); every one that fits a
 * Number exactly (times, versions) is made one, so the page can do sums with them. */
function numbers(value) {
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value;
  if (Array.isArray(value)) return value.map(numbers);
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    for (const key of Object.keys(value)) value[key] = numbers(value[key]);
  }
  return value;
}

/** A socket that sends and receives maps. */
export function openSocket(onFrame, onClose) {
  const ws = new WebSocket(socketUrl());
  ws.binaryType = "arraybuffer";
  ws.onmessage = (e) => {
    if (typeof e.data !== "string") onFrame(numbers(decode(new Uint8Array(e.data), { useBigInt64: true })));
  };
  ws.onclose = (e) => onClose(e.code);
  ws.sendFrame = (frame) => ws.readyState === WebSocket.OPEN && ws.send(encode(frame, { ignoreUndefined: true }));
  return ws;
}

const FINAL_CLOSES = new Set([1000, 1009, 4000, 4001, 4003, 4004, 4005, 4008]);

export class Link {
  /** hello: the first hello's fields ({race, name} or {race, token}); onFrame gets every frame. */
  constructor(hello, onFrame, onState) {
    this.hello = { type: "hello", protocol: 1, ...hello };
    this.onFrame = onFrame;
    this.onState = onState;
    this.seq = 0;
    this.pending = [];
    this.version = null;
    this.token = hello.token || null;
    // Sent with each hello that asks for a new seat: a hello sent again after its answer was lost (Redis
    // failing between the seat and the welcome) gets that seat back instead of name_taken.
    // (getRandomValues, not randomUUID: that one exists only on https and localhost)
    this.joinId = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
    this.over = false;
    this.tries = 0;
    this.connect();
  }

  connect() {
    this.onState(this.tries ? "reconnecting" : "connecting");
    const hello = { ...this.hello, key: store.key() || undefined };
    if (this.token) Object.assign(hello, { token: this.token, name: undefined });
    else if ((hello.role || "player") === "player") hello.join_id = this.joinId;
    if (this.version !== null) hello.last_version = this.version;
    this.ws = openSocket((frame) => this.receive(frame), (code) => this.closed(code));
    this.ws.onopen = () => this.ws.sendFrame(hello);
  }

  receive(frame) {
    if (frame.type === "welcome") {
      this.tries = 0;
      this.token = frame.token || this.token;
      this.version = frame.version;
      this.seq = Math.max(this.seq, frame.seq);
      this.pending = this.pending.filter((m) => m.seq > frame.seq);
      this.onState("live");
      for (const m of this.pending) this.ws.sendFrame({ type: "move", seq: m.seq, move: m.move });
    } else if (frame.type === "progress") {
      this.version = Math.max(this.version ?? 0, frame.version);
    } else if (frame.type === "ack" || frame.type === "reject") {
      this.pending = this.pending.filter((m) => m.seq !== frame.seq);
    } else if (frame.type === "finished") {
      this.over = true;
    }
    this.onFrame(frame);
  }

  move(text) {
    this.seq += 1;
    this.pending.push({ seq: this.seq, move: text });
    this.ws.sendFrame({ type: "move", seq: this.seq, move: text });
  }

  send(frame) {
    this.ws.sendFrame(frame);
  }

  closed(code) {
    if (this.over || this.left || FINAL_CLOSES.has(code)) {
      this.onState(this.over ? "over" : "closed");
      return;
    }
    this.tries += 1;
    this.onState("reconnecting");
    setTimeout(() => this.connect(), Math.min(250 * 2 ** this.tries, 5000));
  }

  /** Close for good (the page moves on to another race). */
  close() {
    this.left = true;
    this.ws.close();
  }
}

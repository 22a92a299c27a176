// @ts-check
// The daemon's API from the browser: JSON calls with the bearer token and this tab's client id, and a session's
// event stream read with fetch (EventSource cannot send the Authorization header) that reconnects by itself
// from the last event id it saw.

export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

/** What a refused answer says: the message of the API's JSON error, else its status. */
async function refusal(res) {
  try {
    const message = (await res.json())?.error?.message;
    if (typeof message === "string" && message) return `HTTP ${res.status}: ${message}`;
  } catch {}
  return `HTTP ${res.status}`;
}

/** Why an event stream was refused for good, when the daemon's answer did not say it (not its JSON). */
const STOPPED_BECAUSE = {
  400: "the daemon calls the stream's request wrong",
  401: "the token was refused",
  404: "no such session here, or not this token's",
};

/**
 * What the page's user can do about it, said after the daemon's words too: those speak to an API client ("resume
 * from 3 or less") or name only what is missing ('no session "…"', when it was deleted while open).
 */
const STOPPED_DO = {
  400: "reload the page to read the session again",
  401: "sign in again with the link `brain token` prints",
  404: "it may have been deleted; pick another in the list",
};

/** An event the stream sent that the page cannot read, named by its seq (or the one before it). */
class MalformedEvent extends Error {}

/** The page's own handling of an event failed: reading it again fails the same way. */
class UnhandledEvent extends Error {}

/** Calls the page's handler for what the stream sent, naming `what` when it throws. */
function handle(what, handler) {
  try {
    handler();
  } catch (err) {
    throw new UnhandledEvent(`${what} could not be shown: ${err?.message ?? err}`);
  }
}

/**
 * Cuts an event stream's text into its messages. Each piece is searched for a message's end once, as it comes:
 * searching all of the message so far for each piece cost the square of one large event (a 4 MiB tool result
 * in 64 KiB pieces).
 */
class Messages {
  /** The message so far, in the pieces it came in. */
  pieces = [];
  /** Whether the last piece ended in CR: an LF that starts the next one is the same line end. */
  cr = false;

  /** The messages that `piece`, the stream's next piece, ends. */
  push(piece) {
    // The SSE spec ends a line with CR LF, LF or CR, and a proxy may rewrite LF to CR LF: each is read as LF.
    const text = (this.cr && piece.startsWith("\n") ? piece.slice(1) : piece).replace(/\r\n?/g, "\n");
    this.cr = piece.endsWith("\r");
    const ended = [];
    let start = 0;
    // The blank line that ends a message, split between two pieces.
    if (this.pieces.at(-1)?.endsWith("\n") && text.startsWith("\n")) {
      ended.push(this.pieces.join("").slice(0, -1));
      this.pieces = [];
      start = 1;
    }
    for (let cut = text.indexOf("\n\n", start); cut >= 0; cut = text.indexOf("\n\n", start)) {
      this.pieces.push(text.slice(start, cut));
      ended.push(this.pieces.join(""));
      this.pieces = [];
      start = cut + 2;
    }
    if (start < text.length) this.pieces.push(text.slice(start));
    return ended;
  }
}

/** One SSE message's `event:`, `id:` and `data:` fields. */
function fields(block) {
  const lines = block.split("\n");
  const field = (name) =>
    lines
      .filter((line) => line.startsWith(`${name}:`))
      .map((line) => line.slice(name.length + 1).trimStart())
      .join("\n");
  return { kind: field("event").trim(), id: field("id").trim(), data: field("data") };
}

/**
 * A new Idempotency-Key for one user action. Not crypto.randomUUID: it exists only in a secure context (https,
 * localhost), and a daemon reached over plain http on another host would then take no prompt at all.
 */
export function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class Api {
  /**
   * @param {string} token
   * @param {string} client
   * @param {(api: Api) => void} [onRefused] told when the daemon answers 401 to any call or stream: the token is
   * not accepted (revoked, rotated), and no retry with it can change that.
   */
  constructor(token, client, onRefused = (_api) => {}) {
    this.token = token;
    this.client = client;
    this.onRefused = onRefused;
  }

  headers(extra = {}) {
    /** @type {Record<string, string>} */
    const headers = { "x-brain-client": this.client, ...extra };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    return headers;
  }

  /**
   * `key`: the Idempotency-Key of one user action (a prompt, a create, a fork, an answer). When the connection
   * broke before the answer came (fetch rejects), the daemon may have run it: a keyed call is sent once more under
   * the same key, which the daemon runs once and answers with the first answer. An unkeyed one is not sent again.
   */
  async call(method, path, body, key) {
    const send = () =>
      fetch(path, {
        method,
        headers: this.headers({
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(key === undefined ? {} : { "idempotency-key": key }),
        }),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    let res;
    try {
      res = await send();
    } catch (err) {
      if (key === undefined) throw err;
      res = await send();
    }
    const text = await res.text();
    let data;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      // Not the daemon's answer (a proxy's error page, a daemon away behind it): its status says more than JSON.parse.
      const type = res.headers.get("content-type") ?? "no content type";
      throw new ApiError(
        res.status,
        "not_json",
        `HTTP ${res.status} for ${method} ${path}: the answer is not JSON (${type}); is something between this page and the daemon (a proxy) failing?`,
      );
    }
    if (!res.ok) {
      const error = data?.error ?? {};
      if (res.status === 401) this.onRefused(this);
      throw new ApiError(
        res.status,
        error.code ?? "error",
        error.message ?? `HTTP ${res.status}`,
        error.field,
      );
    }
    return data;
  }

  /**
   * Follows a session's events from seq `after` on, calling onEvent once per event in order, until stop() is
   * called. onState is told "live", "reconnecting" or "stopped" (with the status of a refusal); onDropped(after, firstSeq) that retention
   * removed the events between the two before the stream could send them (docs/protocol.md, "Dropped ranges").
   */
  follow(id, after, onEvent, onState, onDropped = (_after, _firstSeq) => {}) {
    const abort = new AbortController();
    let last = after;
    const parsed = (data, what) => {
      try {
        return JSON.parse(data);
      } catch (err) {
        throw new MalformedEvent(`${what} is not JSON (${err.message}): ${data.slice(0, 200)}`);
      }
    };
    const run = async () => {
      while (!abort.signal.aborted) {
        /** Why the stream is down, shown while it waits to try again (the daemon's own words when it refused). */
        let why;
        try {
          const res = await fetch(
            `/v1/sessions/${encodeURIComponent(id)}/events?client=${encodeURIComponent(this.client)}`,
            {
              headers: this.headers({ accept: "text/event-stream", "last-event-id": String(last) }),
              signal: abort.signal,
            },
          );
          // Refusals a retry cannot change: no such session, a token refused, a request the daemon calls wrong
          // (a cursor past the log's end, after the session was made again under its id).
          // Its body may be anyone's (a proxy's page): unreadable, the status still says why, and what to do.
          if (res.status === 404 || res.status === 401 || res.status === 400) {
            const said = await refusal(res);
            const why = said === `HTTP ${res.status}` ? `${said}: ${STOPPED_BECAUSE[res.status]}` : said;
            onState("stopped", `${why}; ${STOPPED_DO[res.status]}`, res.status);
            if (res.status === 401) this.onRefused(this);
            return;
          }
          if (!res.ok || !res.body) throw new Error(await refusal(res));
          onState("live");
          const reader = res.body.getReader();
          const decoder = new TextDecoder();
          const messages = new Messages();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            for (const message of messages.push(decoder.decode(value, { stream: true }))) {
              const { kind, id: sent, data } = fields(message);
              if (data && kind === "dropped") {
                const range = parsed(data, `the dropped-range notice after event ${last}`);
                handle("the dropped-range notice", () => onDropped(range.after, range.first_seq));
              } else if (data) {
                const event = parsed(data, sent ? `event ${sent}` : `the event after ${last}`);
                if (!Number.isSafeInteger(event?.seq))
                  throw new MalformedEvent(
                    `event ${sent || `after ${last}`} has no seq: ${data.slice(0, 200)}`,
                  );
                if (event.seq > last) {
                  // The cursor moves only past an event the page was given: reconnecting after a failure
                  // here would skip it for good.
                  handle(`event ${event.seq} (${event.type})`, () => onEvent(event));
                  last = event.seq;
                }
              }
            }
          }
        } catch (err) {
          if (abort.signal.aborted) return;
          // Trying again reads the same event from the same point, every second, for good: stop, and name it.
          // Skipping past it would lose it silently, and what the page shows (a turn running, a request waiting)
          // may hang on it.
          if (err instanceof MalformedEvent) {
            abort.abort(); // the rest of the response: the tenant's stream is given back
            onState(
              "stopped",
              `${err.message}; the stream stopped before it. Reload the page to read it again; if it fails the same way, the daemon (or a proxy between) sends it broken: \`brain sessions events ${id}\` shows the log`,
            );
            return;
          }
          // Trying again from the same point would fail on the same event, every second, for good: what is shown
          // stays, and the page says where it stopped.
          if (err instanceof UnhandledEvent) {
            abort.abort();
            onState(
              "stopped",
              `${err.message}; the stream stopped there, and the transcript above is as it was. Reload the page to read on`,
            );
            return;
          }
          why = String(err?.message ?? err);
        }
        if (abort.signal.aborted) return;
        onState("reconnecting", why);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    };
    run();
    return {
      stop: () => abort.abort(),
      get lastSeq() {
        return last;
      },
    };
  }
}

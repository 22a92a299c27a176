// Follows a session on the daemon in the terminal: prints its events as `brain run` does (text, or --json), a
// spinner with the elapsed time while a turn runs, asks the person (or applies --allow/--deny) for pending
// requests once the replay has caught up, and withdraws a question another client answered first. Survives
// dropped connections and daemon restarts: the stream resumes from the last seq printed.

import { randomUUID } from "node:crypto";
import type { BrainClient } from "../../../client/client.js";
import { ClientError } from "../../../client/errors.js";
import type { SessionEvent, TurnStatus } from "../../../protocol/events.js";
import { jsonPrinter, terminalText, textPrinter } from "../../output.js";
import { onStdoutClosed } from "../../stdout-closed.js";
import { askPerson, fromFlags, type Rules } from "./ask.js";
import { Spinner } from "./spinner.js";

/** Reconnects to a lost daemon half a second after the drop, then backing off to a try every 5 s. */
const RETRY_MS = { first: 500, max: 5000 };

type Request = Extract<SessionEvent, { type: "permission.requested" | "question.requested" }>;

export interface TailOptions {
  json: boolean;
  rules: Rules;
  /** Print events after this seq (0: the whole history). */
  after: number;
  /** Requests up to this seq are history: asked only if still pending once it is reached. */
  caughtUpAt: number;
  /** Stop once this turn settles, or "next": the next turn that starts after the replay; else until detach(). */
  stopAfter?: string;
}

export class RemoteTail {
  private readonly abort = new AbortController();
  private readonly pending = new Map<string, { request: Request; withdraw: AbortController }>();
  private readonly queue: Request[] = [];
  private asking = false;
  private caughtUp: boolean;
  private running: string | undefined;
  private readonly spinner: Spinner;
  private readonly print;
  private settled: TurnStatus | undefined;
  private awaited: string | undefined;

  constructor(
    private readonly client: BrainClient,
    private readonly id: string,
    private readonly options: TailOptions,
  ) {
    this.print = options.json ? jsonPrinter() : textPrinter();
    // JSON lines on a terminal are still JSON lines: a spinner drawn among them would be read as part of them.
    this.spinner = new Spinner(
      process.stdout,
      () => (this.pending.size > 0 ? "waiting for an answer" : ""),
      !options.json,
    );
    this.caughtUp = options.after >= options.caughtUpAt;
    if (options.stopAfter !== "next") this.awaited = options.stopAfter;
  }

  /** The running turn, as far as the events say. */
  get runningTurn(): string | undefined {
    return this.running;
  }

  /** Follows until the awaited turn settles (its status) or detach() (undefined). */
  async run(): Promise<TurnStatus | undefined> {
    // Said once when the daemon is lost, again only when why changes, and once it is back: a line per try filled
    // the terminal while a daemon restarted or stayed down.
    let lost: string | undefined;
    const onDrop = (_seq: number, why: string) => {
      if (why === lost) return;
      this.spinner.erase();
      note(
        lost === undefined
          ? `\n[lost the daemon at ${this.client.url} (${why}); retrying until it is back (Ctrl-C to stop)]\n`
          : `[still retrying: ${why}]\n`,
      );
      lost = why;
    };
    const onReconnect = (seq: number) => {
      lost = undefined;
      this.spinner.erase();
      note(`[reconnected to the daemon at ${this.client.url}; following from event ${seq}]\n`);
    };
    // Nobody reads what it prints any more: it stops following, and the session goes on on the daemon.
    const stopWatching = onStdoutClosed(() => {
      if (this.abort.signal.aborted) return;
      note(`[detached; the session goes on: brain attach ${this.id}]\n`);
      this.detach();
    });
    try {
      for await (const event of this.client.events(this.id, {
        after: this.options.after,
        signal: this.abort.signal,
        onDrop,
        onReconnect,
        retryMs: RETRY_MS.first,
        maxRetryMs: RETRY_MS.max,
      })) {
        this.handle(event);
        if (this.settled !== undefined) break;
      }
    } catch (err) {
      if (!(err instanceof ClientError && err.status === 404)) throw err;
      note(`\n[session ${this.id} is gone: ${err.message}]\n`);
    } finally {
      stopWatching();
      this.spinner.stop();
      this.abort.abort();
      for (const { withdraw } of this.pending.values()) withdraw.abort();
    }
    return this.settled;
  }

  detach(): void {
    this.abort.abort();
  }

  private handle(event: SessionEvent): void {
    this.spinner.erase();
    this.print([event]);
    switch (event.type) {
      case "turn.started":
        this.running = event.turn;
        this.spinner.start();
        if (this.options.stopAfter === "next" && !this.awaited && event.seq > this.options.caughtUpAt) {
          this.awaited = event.turn;
        }
        break;
      case "turn.settled":
        if (this.running === event.turn) this.running = undefined;
        if (!this.running) this.spinner.stop();
        if (this.awaited === event.turn) this.settled = event.data.status;
        break;
      case "permission.requested":
      case "question.requested":
        this.pending.set(event.data.id, { request: event, withdraw: new AbortController() });
        if (this.caughtUp) this.enqueue(event);
        break;
      case "permission.resolved":
      case "question.answered": {
        const open = this.pending.get(event.data.id);
        this.pending.delete(event.data.id);
        // Why it is no longer asked: another client's answer, the ask timeout, the turn interrupted.
        open?.withdraw.abort(event.data.reason ?? "answered by another client");
        break;
      }
    }
    if (!this.caughtUp && event.seq >= this.options.caughtUpAt) {
      this.caughtUp = true;
      for (const { request } of this.pending.values()) this.enqueue(request);
    }
  }

  private enqueue(request: Request): void {
    this.queue.push(request);
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.asking) return;
    this.asking = true;
    try {
      while (this.queue.length > 0) {
        const request = this.queue.shift()!;
        const open = this.pending.get(request.data.id);
        if (!open) continue; // answered meanwhile
        let answer = fromFlags(request, this.options.rules);
        if (!answer && this.options.rules.interactive) {
          this.spinner.erase();
          answer = await askPerson(request, open.withdraw.signal);
          if (!answer) {
            // Withdrawn, or the terminal's input ended (Ctrl-D): then it waits for another client or its timeout.
            const why = open.withdraw.signal.aborted
              ? String(open.withdraw.signal.reason)
              : "the terminal's input ended";
            note(`[no longer asked: ${why}]\n`);
          }
        }
        if (!answer) {
          if (!this.options.rules.interactive) {
            const hint =
              request.type === "permission.requested" ? ` (or run with --allow ${request.data.tool})` : "";
            note(`[waiting for another client to answer ${request.data.id}${hint}]\n`);
          }
          continue;
        }
        // Keyed: asked again after a daemon restart, it is decided once.
        const key = { key: randomUUID() };
        await this.client.answer(this.id, request.data.id, answer, key).catch((err: ClientError) => {
          const answeredElsewhere = err.status === 409 && /no pending/.test(err.message);
          if (!answeredElsewhere) note(`[could not answer: ${err.message}]\n`);
        });
      }
    } finally {
      this.asking = false;
    }
  }
}

/**
 * A line of the tail's own on stderr. It quotes what the session and the daemon said (a tool's name, which the model
 * chose; a request id, which the harness chose; an error message), which may hold control characters: raw, an
 * OSC 52 in a tool name set the terminal's clipboard.
 */
function note(text: string): void {
  process.stderr.write(terminalText(text));
}

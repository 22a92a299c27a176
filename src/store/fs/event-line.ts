// Each event's log line after its `{"seq":N,` (the seq is given at commit time), and its length in bytes.
//
// An assistant.delta whose text the fast frame decoder found verbatim in its frame (nothing in it needs
// escaping) is not serialised again: its line is a prefix shared by every delta of the same turn, type and
// millisecond, then the text itself. Until its group commit is durable, such a line holds no bytes of its own,
// only two references (the GC copies far less while a big batch waits for fdatasync).
import type { NewEvent } from "../../protocol/events.js";
import { verbatimText } from "../../protocol/fast-frames.js";

export class LineTails {
  /** UTF-8 length of the tail last returned by tail(). */
  bytes = 0;
  private readonly sessionJson: string;
  private ts = "";
  private turn: string | undefined;
  private type = "";
  private prefix = "";
  private prefixBytes = 0;

  constructor(private readonly session: string) {
    this.sessionJson = JSON.stringify(session);
  }

  /** Throws (as JSON.stringify does) when the event holds a value JSON cannot carry. */
  tail(ts: string, e: NewEvent): string {
    const text = verbatimText(e.data);
    if (text === undefined) {
      const tail = JSON.stringify({ ts, session: this.session, turn: e.turn, type: e.type, data: e.data });
      this.bytes = Buffer.byteLength(tail) - 1;
      return tail.slice(1);
    }
    if (ts !== this.ts || e.turn !== this.turn || e.type !== this.type || this.prefix === "") {
      // ts is an ISO date and type an event name: neither needs escaping. The field order is JSON.stringify's.
      const turn = e.turn === undefined ? "" : `"turn":${JSON.stringify(e.turn)},`;
      this.prefix = `"ts":"${ts}","session":${this.sessionJson},${turn}"type":"${e.type}","data":{"text":"`;
      this.prefixBytes = Buffer.byteLength(this.prefix);
      this.ts = ts;
      this.turn = e.turn;
      this.type = e.type;
    }
    this.bytes = this.prefixBytes + Buffer.byteLength(text) + 3;
    return `${this.prefix}${text}"}}`;
  }
}

// One group commit's worth of appends, and its lines. Events wait for their fdatasync as parallel arrays (the
// caller's event objects, each one's body, its kind; per append() call its count and promise functions), written
// by index and kept, with their room, by the log's next batch: an event queued costs no object of the log's own.
// A runner's delta (its text verbatim in its frame, or still the bytes of its stdout chunk: see RunnerFrameReader)
// keeps not even the caller's objects: its text is copied at once into the batch's bytes (off the JS heap), so
// the thousands of deltas that wait through one fdatasync leave the GC nothing to copy or promote (their strings
// would keep each frame's whole line alive); its string is made again once durable, for the short life of the
// subscribers' call. An extension host's delta, whose text the run's translator gathers as bytes (TextBytes),
// keeps only its place in those bytes, which stay as they are: its text is copied once, into the line.
// Other deltas keep their string: their callers mostly hold it anyway (a whole-text accumulator), and the two
// copies cost more than they save there (measured on the extension host and appends benches). The lines are
// written straight into the commit's buffer (its byte offsets come from the writes themselves, no second pass to
// measure the text); a turn's message's text blocks are written as they are, after it.
import type { NewEvent, SessionEvent } from "../../protocol/events.js";
import { heldBytes, heldMessage, verbatimText } from "../../protocol/fast-frames.js";
import { isPlainJsonString } from "../../protocol/json-string.js";
import { Bytes, utf8Slice } from "./log-bytes.js";
import { ANCHOR_BYTES, type WriterState } from "./log-format.js";

/** The body is the data's JSON: the event gets a line of its own. */
const WHOLE = 0;
/** The body is a delta's text as a JSON string, quotes included. */
const QUOTED = 1;
/** The body is a delta's text itself: no character in it needs escaping in JSON, and none is a lone surrogate. */
const RAW = 2;
/** As RAW, but the text is in the batch's bytes (`texts`), not held as a string. */
const HELD = 3;
/** As RAW, but the text is bytes of a stable buffer (a turn's TextBytes block), kept where they are. */
const REF = 4;
/**
 * The body is the end of a message's JSON after its text, which is in `blocks` (see heldMessage). Like WHOLE, a
 * line of its own; the kinds below it are the deltas'.
 */
const MESSAGE = 5;

/**
 * A commit's events are delivered this many at a time (see deliver): a part's events die before the next part's
 * are made, so a young-generation GC finds few alive, while each delivery still carries hundreds of them.
 */
const DELIVER_EVENTS = 1024;

const [QUOTE, COMMA, NEWLINE, BRACE] = [0x22, 0x2c, 0x0a, 0x7d];

/** `{text}` and nothing else: the only data the delta lines can hold. */
function onlyText(data: Record<string, unknown>): boolean {
  let n = 0;
  for (const _ in data) n++;
  return n === 1;
}

export class Batch {
  /** How many events are queued: the columns below hold them at [0, n), and keep their room when reused. */
  private n = 0;
  private readonly kinds: number[] = [];
  private readonly turns: (string | undefined)[] = [];
  /** The caller's event; for a REF delta, the buffer its text is in; undefined for a HELD one. */
  private readonly objs: (NewEvent | Buffer | undefined)[] = [];
  private readonly bodies: string[] = [];
  /** A HELD delta's text in `texts`, or a REF delta's in its buffer: [start, end), quotes not included. */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  /**
   * The HELD deltas' texts, each as it is written in a line, `"text",`, so a run of them is copied as one range.
   */
  private texts = new Bytes(0);
  /** The bytes of the REF deltas' texts, which are neither in `texts` nor in `bodies`. */
  private outside = 0;
  /** The length of the `bodies`' strings, kept as they are set: with `texts` and `outside`, what `size` adds. */
  private bodyChars = 0;
  private counts: number[] = [];
  /** Per append: whether its caller reads the events its promise resolves with (AppendOptions.ignoreResult). */
  private wants: boolean[] = [];
  /** The events of the appends that want them, gathered part by part as they are made (see collect). */
  private results: (SessionEvent[] | undefined)[] = [];
  /** The append the next part starts in, and the index of its first event. */
  private cursor = 0;
  private cursorAt = 0;
  private resolves: ((events: SessionEvent[]) => void)[] = [];
  private rejects: ((err: Error) => void)[] = [];
  /**
   * How many of the appends are awaited (AppendOptions): their callers can do nothing until the batch is durable.
   * Only a lone one (a sequential tool call) is written on the calling thread: calls in flight together share the
   * commit, and meanwhile the loop has their harness's next calls to read; blocked in the write, it read them only
   * after it (32 calls in flight went about a quarter slower, measured A/B).
   */
  awaited = 0;
  /**
   * How many of the appends want a commit now: all but the deferred ones (AppendOptions), plus one once the
   * deferred ones' wait is over. A batch of deferred appends alone is not committed: it waits for company.
   */
  due = 0;

  get length(): number {
    return this.n;
  }

  /**
   * About how many bytes the queued events take (their texts and bodies as they will be written): a sum of
   * counters the batch keeps anyway, so cheap enough to read once per chunk read from a harness (see Backlog).
   */
  get size(): number {
    return this.texts.at + this.outside + this.bodyChars;
  }

  /**
   * Empties the batch once it is stored, to queue the next (its columns keep their room, its held texts' buffer
   * too when it is at most `keepBytes`: written over, their pages are already the process's).
   */
  reset(keepBytes: number): void {
    this.objs.fill(undefined, 0, this.n); // nothing of the caller's is kept
    this.bodies.fill("", 0, this.n);
    this.n = 0;
    this.awaited = 0;
    this.due = 0;
    this.texts = this.texts.whole().length <= keepBytes ? this.texts : new Bytes(0);
    this.texts.at = 0;
    this.outside = 0;
    this.bodyChars = 0;
    this.counts = [];
    this.wants = [];
    this.results = [];
    this.cursor = this.cursorAt = 0;
    this.resolves = [];
    this.rejects = [];
  }

  /**
   * Queues one append() call's events, serialised now so a value JSON cannot hold fails its own append only
   * (then none of them is queued, and this throws). Its promise's functions follow with `settle`.
   */
  add(events: readonly NewEvent[], wanted = true, deferred = false): void {
    const [before, textsBefore, outsideBefore, charsBefore] = [
      this.n,
      this.texts.at,
      this.outside,
      this.bodyChars,
    ];
    try {
      for (const e of events) this.push(e);
    } catch (err) {
      this.n = before;
      this.texts.at = textsBefore;
      this.outside = outsideBefore;
      this.bodyChars = charsBefore;
      throw err;
    }
    this.counts.push(events.length);
    this.wants.push(wanted);
    if (!deferred) this.due++;
  }

  /** The executor of the promise of the append() just added: one function for all of them, not a closure each. */
  readonly settle = (resolve: (events: SessionEvent[]) => void, reject: (err: Error) => void): void => {
    this.resolves.push(resolve);
    this.rejects.push(reject);
  };

  /**
   * Gives the durable batch's events, numbered from `first` and stamped `ts`, to the log's state and then its
   * subscribers in parts of DELIVER_EVENTS, each made as it is given; then resolves every append() with its own.
   */
  deliver(
    session: string,
    first: number,
    ts: string,
    state: { observe(events: readonly SessionEvent[]): void },
    subscribers: { notify(events: SessionEvent[]): void },
  ): void {
    for (let from = 0; from < this.n; from += DELIVER_EVENTS) {
      const part = this.stored(session, first, ts, from, Math.min(this.n, from + DELIVER_EVENTS));
      state.observe(part);
      this.collect(part, from);
      subscribers.notify(part);
    }
    this.resolve();
  }

  /**
   * Keeps, of `part` (the batch's events from index `from` on; the parts come in order, from 0), the events of
   * the appends that want them back. The others' events are held by nothing once the part is delivered.
   */
  private collect(part: readonly SessionEvent[], from: number): void {
    const { counts, wants, results } = this;
    const to = from + part.length;
    while (this.cursor < counts.length) {
      const k = this.cursor;
      const start = this.cursorAt;
      const end = start + counts[k]!;
      if (wants[k]) {
        let out = results[k];
        if (out === undefined) results[k] = out = [];
        for (let i = Math.max(start, from); i < end && i < to; i++) out.push(part[i - from]!);
      }
      if (end > to) return; // it goes on in the next part
      this.cursor++;
      this.cursorAt = end;
    }
  }

  /** Every append() of the batch resolves with its own events (collected), in order; [] when not wanted. */
  private resolve(): void {
    for (let k = 0; k < this.counts.length; k++) this.resolves[k]!(this.results[k] ?? []);
  }

  reject(err: Error): void {
    for (const reject of this.rejects) reject(err);
  }

  /**
   * The batch's events [from, to) as stored, numbered from `first` (the batch's first event's seq), all stamped
   * `ts`. A commit's events are made part by part, in order, so that no more than a part of them is alive at
   * once while subscribers run: thousands of deltas alive together were what the GC copied and promoted.
   */
  private stored(session: string, first: number, ts: string, from: number, to: number): SessionEvent[] {
    const { kinds, turns, objs, starts, ends } = this;
    const out: SessionEvent[] = new Array(to - from);
    for (let i = from; i < to; i++) {
      const kind = kinds[i];
      const turn = turns[i];
      let type: string;
      let data: unknown;
      if (kind === HELD || kind === REF) {
        type = "assistant.delta";
        const buf = kind === HELD ? this.texts.whole() : (objs[i] as Buffer);
        data = { text: utf8Slice.call(buf, starts[i]!, ends[i]!) };
      } else ({ type, data } = objs[i] as NewEvent);
      out[i - from] = (
        turn === undefined
          ? { seq: first + i, ts, session, type, data }
          : { seq: first + i, ts, session, turn, type, data }
      ) as SessionEvent;
    }
    return out;
  }

  /**
   * Lays out the batch's lines (after `head`, a new file's header or "") in one buffer to be written at byte
   * `offset`: adjacent deltas of one turn share a line, and continue the previous line when it holds deltas of
   * the same turn. Returns the bytes, as parts to write one after the other (a message's text blocks are parts of
   * their own, not copied), and the writer's new state; `state` is left as it was, so a failed commit changes
   * nothing. `scratch`, when big enough, is written over; `scratch` out is the buffer written, for the next.
   */
  layout(
    head: string,
    first: number,
    ts: string,
    ms: number,
    offset: number,
    state: WriterState,
    scratch?: Buffer,
  ): { parts: Buffer[]; length: number; state: WriterState; scratch: Buffer } {
    let { context, sinceAnchor, anchor } = state;
    const { n, kinds, turns, objs, bodies, starts, ends, texts } = this;
    let estimate = head.length * 3 + texts.at + this.outside + 64;
    for (let i = 0; i < n; i++) estimate += bodies[i]!.length + 16;
    // Fresh pages fault in one by one: a new buffer leaves room to be reused by larger batches.
    const out = new Bytes(scratch !== undefined && scratch.length >= estimate ? scratch : estimate * 2);
    out.write(head);
    const parts: Buffer[] = [];
    let [mark, aside] = [0, 0]; // where the part being written starts in `out`; the bytes of the blocks before
    // A commit's events are nearly all of one turn: its member is made once, not per event (JSON.stringify of the
    // id and the template cost more than the rest of a tool event's line head).
    let [lastTurn, turnMember] = [undefined as string | undefined, ""];
    for (let i = 0; i < n; ) {
      const seq = first + i;
      const start = out.at + aside;
      const eventTurn = turns[i];
      if (eventTurn !== lastTurn) {
        lastTurn = eventTurn;
        turnMember = eventTurn === undefined ? "" : `"turn":${JSON.stringify(eventTurn)},`;
      }
      const turn = turnMember;
      if (kinds[i] === WHOLE || kinds[i] === MESSAGE) {
        const e = objs[i] as NewEvent;
        out.write(`{"seq":${seq},"ts":"${ts}",${turn}"type":"${e.type}","data":`);
        if (kinds[i] === MESSAGE) {
          out.write('{"text":"');
          parts.push(out.part(mark));
          mark = out.at;
          for (const block of heldMessage(e.data)!.blocks) {
            parts.push(block);
            aside += block.length;
          }
        }
        out.write(bodies[i]!);
        out.byte(BRACE);
        out.byte(NEWLINE);
        anchor = { seq, offset: offset + start };
        sinceAnchor = out.at + aside - start;
        context = undefined;
        i++;
        continue;
      }
      const continues = context !== undefined && context.turn === eventTurn && sinceAnchor < ANCHOR_BYTES;
      if (continues) out.write(`[${seq},${ms - context!.ms},`);
      else out.write(`{"seq":${seq},"ts":"${ts}",${turn}"d":[`);
      let j = i;
      do {
        if (j > i) out.byte(COMMA);
        const kind = kinds[j];
        if (kind === HELD) {
          let k = j;
          while (k + 1 < n && kinds[k + 1] === HELD && turns[k + 1] === eventTurn) k++;
          out.range(texts.whole(), starts[j]! - 1, ends[k]! + 1); // quotes and commas between: all held so
          j = k + 1;
          continue;
        }
        if (kind === REF) {
          out.byte(QUOTE);
          out.range(objs[j] as Buffer, starts[j]!, ends[j]!);
          out.byte(QUOTE);
        } else if (kind === RAW) {
          out.byte(QUOTE);
          out.write(bodies[j]!);
          out.byte(QUOTE);
        } else out.write(bodies[j]!);
        j++;
      } while (j < n && kinds[j]! < MESSAGE && kinds[j] !== WHOLE && turns[j] === eventTurn);
      out.byte(0x5d); // ]
      if (!continues) {
        out.byte(BRACE);
        anchor = { seq, offset: offset + start };
        sinceAnchor = 0;
      }
      out.byte(NEWLINE);
      sinceAnchor += out.at + aside - start;
      context = { turn: eventTurn, ms };
      i = j;
    }
    parts.push(out.part(mark));
    const length = out.at + aside;
    return { parts, length, state: { context, sinceAnchor, anchor }, scratch: out.whole() };
  }

  private push(e: NewEvent): void {
    if (e.type === "assistant.delta") {
      const bytes = heldBytes(e.data);
      if (bytes !== undefined) {
        const stable = bytes.stableBuffer;
        if (stable !== undefined) return this.set(e.turn, stable, "", REF, bytes.start, bytes.end);
        return this.hold(e.turn, bytes);
      }
      const verbatim = verbatimText(e.data);
      if (verbatim !== undefined) return this.hold(e.turn, verbatim);
      const data = e.data as Record<string, unknown>;
      const text = data.text;
      // Only a plain {text} fits the delta lines; anything else is stored whole, as the reader must give it back.
      if (typeof text === "string" && onlyText(data)) {
        if (!isPlainJsonString(text)) return this.set(e.turn, e, JSON.stringify(text), QUOTED);
        return this.set(e.turn, e, text, RAW);
      }
    }
    const message = e.type === "assistant.message" ? heldMessage(e.data) : undefined;
    if (message) {
      return this.set(e.turn, e, `","stop_reason":${JSON.stringify(message.stop_reason)}}`, MESSAGE);
    }
    const body = JSON.stringify(e.data);
    if (body === undefined) throw new Error(`the data of a ${e.type} event is not JSON`);
    this.set(e.turn, e, body, WHOLE);
  }

  /**
   * A delta whose text needs no escape: its bytes now (copied from the chunk it was read from, when it is bytes),
   * its string again once durable.
   */
  private hold(turn: string | undefined, text: string | Parameters<Bytes["from"]>[0]): void {
    const texts = this.texts;
    texts.byte(QUOTE);
    const start = texts.at;
    if (typeof text === "string") texts.write(text);
    else texts.from(text);
    const end = texts.at;
    texts.byte(QUOTE);
    texts.byte(COMMA);
    this.set(turn, undefined, "", HELD, start, end);
  }

  /** A REF delta's text stays where it is (see stableBuffer): it is copied only into the commit's line. */
  private set(
    turn: string | undefined,
    obj: NewEvent | Buffer | undefined,
    body: string,
    kind: number,
    start = 0,
    end = 0,
  ): void {
    const i = this.n++;
    this.kinds[i] = kind;
    this.turns[i] = turn;
    this.objs[i] = obj;
    this.bodies[i] = body;
    this.starts[i] = start;
    this.ends[i] = end;
    this.bodyChars += body.length;
    if (kind === REF) this.outside += end - start + 3;
  }
}

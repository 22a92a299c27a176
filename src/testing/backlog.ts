// For the backpressure tests: a harness flooding a session whose disk the test holds (src/core/backlog.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { BACKLOG_BYTES } from "../core/backlog.js";
import type { HarnessFactory } from "../core/harness.js";
import type { Session } from "../core/session.js";
import type { AttachmentTimeouts } from "../harnesses/process/attachment-timeouts.js";
import { ProcessFactory, type ProcessHarnessSpec } from "../harnesses/process/factory.js";
import { READ_AHEAD_BYTES } from "../harnesses/read-gate.js";
import type { SessionEvent } from "../protocol/events.js";
import { events } from "./brain.js";
import { inlineRunnerArgs } from "./inline-runner.js";

/** The bytes of the session's events that wait for the disk. */
export const waiting = (session: Session): number => session.log.pending!.bytes;

/**
 * Resolves, with the flooder's last count, once the log is behind by more than the bound and `written` (how many
 * events the flooder says it wrote) has not moved across several polls: blocked on its pipe, if the gate paused
 * it (a flooder that has written everything has stopped too). The count must be above zero: a flooder that never
 * started, or a progress file read from the wrong dir (0), stands still too and would prove no pause.
 */
export async function blocked(session: Session, written: () => number): Promise<number> {
  let [last, still] = [-1, 0];
  await expect
    .poll(
      () => {
        const now = written();
        still = now === last ? still + 1 : 0;
        last = now;
        return still >= 4 && now > 0 && waiting(session) > BACKLOG_BYTES;
      },
      { timeout: 60_000, interval: 250 },
    )
    .toBe(true);
  return last;
}

/** A runner's flood: about four times the bound, in deltas numbered in order. */
export const [FLOOD_EVENTS, FLOOD_PAD] = [32 * 1024, 1000];
/** The most a read from a pipe gives at once: what may be read past the bound before the check. */
export const PIPE_CHUNK = 64 * 1024;

/** Delta `i`'s text: its number, then padding. */
export const floodText = (i: number) => `${String(i).padStart(6, "0")}${"x".repeat(FLOOD_PAD)}`;

/**
 * A flood (in deltas) past a session's backlog bound, well within it and the read-ahead together (about 1 MiB
 * over): the frames past the backlog are held back in the read-ahead, not pausing the runner's stdout.
 */
export const READ_AHEAD_FLOOD = Math.ceil((BACKLOG_BYTES + READ_AHEAD_BYTES / 4) / (FLOOD_PAD + 6));

/**
 * A runner that, on the prompt "flood", once told to go (a file `go` beside `ready`, which it writes when it is
 * asked), writes `flood` deltas (FLOOD_EVENTS) as fast as its stdout takes them, noting in `progress` (in the
 * attachment's native dir) how many it has written, and answers the prompt once all are written; any other
 * prompt it echoes. Answers anything else at once. `spec`: the factory's other options.
 */
export function floodingRunner(
  shared = false,
  flood = FLOOD_EVENTS,
  timeouts?: Partial<AttachmentTimeouts>,
  spec: Pick<ProcessHarnessSpec, "hostReadAheadBytes"> = {},
): ProcessFactory {
  const onPrompt = `
    const dir = dirs.get(f.attachment);
    if (f.params.text !== "flood") { delta("echo: " + f.params.text); reply({}); return; }
    fs.writeFileSync(dir + "/ready", "");
    while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < ${flood}; i++) {
      const more = delta(String(i).padStart(6, "0") + "x".repeat(${FLOOD_PAD}));
      if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
      if (!more) await new Promise((r) => process.stdout.once("drain", r));
    }
    fs.writeFileSync(dir + "/progress", "${flood}");
    reply({});`;
  const args = inlineRunnerArgs(
    "const dirs = new Map();",
    `
  const delta = (text) => send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text } });
  if (!f.method) return;
  if (f.method === "open") { dirs.set(f.attachment, f.params.dir); reply({}); }
  else if (f.method === "prompt") (async () => { ${onPrompt} })();
  else reply(f.method === "checkpoint" ? [] : {});`,
  );
  return new ProcessFactory({ name: "inline", command: process.execPath, args, shared, timeouts, ...spec });
}

/** How many deltas a flooder (floodingRunner, or a CLI stand-in) says it has written in `dir`. */
export function progressIn(dir: string): number {
  try {
    return Number(readFileSync(join(dir, "progress"), "utf8"));
  } catch {
    return 0;
  }
}

/** `factory`, with the session's backlog kept from it: the harness as it read before the gate. */
export function withoutGate(factory: HarnessFactory): HarnessFactory {
  return {
    name: factory.name,
    supportsSteering: factory.supportsSteering,
    open: ({ backlog: _, ...options }) => factory.open(options),
  };
}

/** Fails unless the deltas of `all` are the flood's (of `flood` deltas), whole and in order. */
export function expectWholeFlood(all: SessionEvent[], flood = FLOOD_EVENTS): void {
  const deltas = all.filter((e) => e.type === "assistant.delta");
  const text = deltas.map((e) => (e.data as { text: string }).text).join("");
  const size = FLOOD_PAD + 6;
  expect(text.length).toBe(flood * size);
  for (let i = 0; i < flood; i++) {
    if (text.slice(i * size, (i + 1) * size) !== floodText(i)) expect.fail(`delta ${i} is not in its place`);
  }
}

/** A flood started with the log's next fsync held (see the backpressure tests' floodHeld). */
export interface HeldFlood {
  session: Session;
  turn: Awaited<ReturnType<Session["prompt"]>>;
  release: () => void;
  /** How many deltas the agent has written so far. */
  progress: () => number;
}

/**
 * The three tests every gated reader gets: without the gate Brain's holding grows past the bound; with it, at most
 * the bound plus `readAhead` (what the reader had taken when it stopped), the writer blocks, and every delta
 * arrives in order once the disk is back; a close or an interrupt asked for while paused settles. `writer` names
 * what floods ("the CLI"), `waitsOn` where its writes wait ("its pipe").
 */
export function floodGateTests(
  floodHeld: (gated: boolean) => Promise<HeldFlood>,
  { writer, waitsOn, readAhead = PIPE_CHUNK }: { writer: string; waitsOn: string; readAhead?: number },
): void {
  it(`without the gate, grows what Brain holds with what ${writer} writes (the state the gate prevents)`, async () => {
    const { session, release } = await floodHeld(false);
    try {
      await expect.poll(() => waiting(session), { timeout: 60_000 }).toBeGreaterThan(3 * BACKLOG_BYTES);
    } finally {
      release();
    }
  }, 180_000);

  it(`is not read past the bound: ${writer} waits on ${waitsOn}, and every delta arrives in order once the disk is back`, async () => {
    const { session, turn, release, progress } = await floodHeld(true);
    try {
      const written = await blocked(session, progress);
      expect(written).toBeLessThan(FLOOD_EVENTS);
      expect(waiting(session)).toBeLessThanOrEqual(BACKLOG_BYTES + readAhead);
    } finally {
      release();
    }
    expect((await turn.settled).status).toBe("completed");
    expectWholeFlood(await events(session));
    // The agent reads on after the flood: the next prompt is answered.
    const next = await session.prompt("after");
    expect((await next.settled).status).toBe("completed");
  }, 180_000);

  it(`still settles a close or an interrupt asked for while ${writer} is paused`, async () => {
    const { session, turn, release, progress } = await floodHeld(true);
    await blocked(session, progress);
    const interrupting = session.interrupt();
    const closing = session.close();
    release();
    await expect(interrupting).resolves.toBeUndefined();
    await expect(closing).resolves.toBeUndefined();
    expect(["interrupted", "completed", "failed"]).toContain((await turn.settled).status);
  }, 180_000);
}

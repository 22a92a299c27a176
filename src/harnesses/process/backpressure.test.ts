// A runner that writes events faster than the session's log can make them durable (its fsync held by the test):
// Brain stops reading the runner's stdout while the log is behind by more than BACKLOG_BYTES, so what it holds
// stays bounded and the runner blocks on its full pipe; once the disk comes back, every event arrives in order.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BACKLOG_BYTES } from "../../core/backlog.js";
import type { HarnessFactory } from "../../core/harness.js";
import type { Session } from "../../core/session.js";
import { testIO } from "../../store/fs/testing/fault-io.js";
import { blocked, waiting } from "../../testing/backlog.js";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { ProcessFactory } from "./factory.js";

/** The runner's flood: about four times the bound, in deltas numbered in order. */
const [EVENTS, PAD] = [32 * 1024, 1000];
/** The most a read from a pipe gives at once: what may be read past the bound before the check. */
const CHUNK = 64 * 1024;

/** Delta `i`'s text: its number, then padding. */
const textOf = (i: number) => `${String(i).padStart(6, "0")}${"x".repeat(PAD)}`;

/**
 * A runner that, on the prompt "flood", once told to go (a file `go` beside `ready`, which it writes when it is
 * asked), writes EVENTS deltas as fast as its stdout takes them, noting in
 * `progress` (in the attachment's native dir) how many it has written, and answers the prompt once all are
 * written; any other prompt it echoes. Answers anything else at once.
 */
function floodingRunner(shared = false): ProcessFactory {
  const onPrompt = `
    const dir = dirs.get(f.attachment);
    if (f.params.text !== "flood") { delta("echo: " + f.params.text); reply({}); return; }
    fs.writeFileSync(dir + "/ready", "");
    while (!fs.existsSync(dir + "/go")) await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < ${EVENTS}; i++) {
      const more = delta(String(i).padStart(6, "0") + "x".repeat(${PAD}));
      if (i % 16 === 15) fs.writeFileSync(dir + "/progress", String(i + 1));
      if (!more) await new Promise((r) => process.stdout.once("drain", r));
    }
    fs.writeFileSync(dir + "/progress", "${EVENTS}");
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
  return new ProcessFactory({ name: "inline", command: process.execPath, args, shared });
}

/** `factory`, with the session's backlog kept from it (`gated` false): the runner as read before the gate. */
function withoutGate(factory: ProcessFactory): HarnessFactory {
  return {
    name: factory.name,
    supportsSteering: factory.supportsSteering,
    open: ({ backlog: _, ...options }) => factory.open(options),
  };
}

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

/** How many deltas the session's runner says it has written. */
function progress(session: Session): number {
  try {
    return Number(readFileSync(join(t.store.paths(session.id).native, "progress"), "utf8"));
  } catch {
    return 0;
  }
}

/**
 * Starts the flood with the log's next fsync held; returns the fsync's release. `other`:
 * a session opened before on the same factory (a shared runner's second attachment).
 */
async function floodHeld(factory: HarnessFactory, other = false) {
  const io = testIO();
  t = makeBrain({ factories: [factory], io });
  const second = other ? await t.brain.create({ harness: "inline" }) : undefined;
  if (second) expect((await (await second.prompt("first")).settled).status).toBe("completed");
  const session = await t.brain.create({ harness: "inline" });
  const turn = await session.prompt("flood");
  // The fsync is held before the first delta: none of the flood is durable, however busy the machine.
  const native = t.store.paths(session.id).native;
  await expect.poll(() => existsSync(join(native, "ready")), { timeout: 30_000 }).toBe(true);
  const release = io.holdDurable();
  writeFileSync(join(native, "go"), "");
  return { session, turn, release, second };
}

describe("a runner flooding a session whose disk has fallen behind", () => {
  it("without the gate, grows what Brain holds with what the runner writes (the state the gate prevents)", async () => {
    const { session, release } = await floodHeld(withoutGate(floodingRunner()));
    try {
      await expect.poll(() => waiting(session), { timeout: 60_000 }).toBeGreaterThan(3 * BACKLOG_BYTES);
    } finally {
      release();
    }
  }, 180_000);

  it("is not read past the bound: it blocks on its pipe, and every event arrives in order once the disk is back", async () => {
    const { session, turn, release } = await floodHeld(floodingRunner());
    try {
      const written = await blocked(session, () => progress(session));
      expect(written).toBeLessThan(EVENTS);
      expect(waiting(session)).toBeLessThanOrEqual(BACKLOG_BYTES + CHUNK);
    } finally {
      release();
    }
    expect((await turn.settled).status).toBe("completed");
    const deltas = (await events(session)).filter((e) => e.type === "assistant.delta");
    const text = deltas.map((e) => (e.data as { text: string }).text).join("");
    expect(text.length).toBe(EVENTS * (PAD + 6));
    for (let i = 0; i < EVENTS; i++) {
      if (text.slice(i * (PAD + 6), (i + 1) * (PAD + 6)) !== textOf(i))
        expect.fail(`delta ${i} is not in its place`);
    }
  }, 180_000);

  it("still settles a close asked for while the runner is paused", async () => {
    const { session, release } = await floodHeld(floodingRunner());
    await blocked(session, () => progress(session));
    const closing = session.close();
    release();
    await expect(closing).resolves.toBeUndefined();
  }, 180_000);

  it("pauses a shared runner for all its sessions, and a session closed while paused lets the others go on", async () => {
    const { session, release, second } = await floodHeld(floodingRunner(true), true);
    await blocked(session, () => progress(session));
    // The other session's prompt waits behind the flood in the one pipe they share.
    const waitingTurn = await second!.prompt("behind");
    const closing = session.close();
    release();
    await expect(closing).resolves.toBeUndefined();
    expect((await waitingTurn.settled).status).toBe("completed");
    // The closed session holds nothing back: the runner goes on for the other.
    const after = await second!.prompt("after");
    expect((await after.settled).status).toBe("completed");
    const texts = (await events(second!)).filter((e) => e.type === "assistant.delta").map((e) => e.data);
    expect(texts).toEqual([{ text: "echo: first" }, { text: "echo: behind" }, { text: "echo: after" }]);
  }, 180_000);
});

// A session whose log fails: a turn writes nothing after its first lost event until it can say it failed, no
// turn is left open, and every tool result has its call.
import { appendFileSync, rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events.js";
import type { ToolResult } from "../protocol/runner.js";
import { FsSessionStore, type LogIO, nodeLogIO } from "../store/fs/index.js";
import { InlineCommits } from "../store/fs/inline-commits.js";
import { testIO } from "../store/fs/testing/fault-io.js";
import { scripted, tempDir, waitForEvent } from "../testing/brain.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";
import { Brain } from "./brain.js";
import type { HarnessFactory } from "./harness.js";
import { HarnessRegistry } from "./registry.js";

/** Fails every write while `full` says so, as a full disk does (nothing of the write lands). */
function diskIO(full: (text: string) => boolean): LogIO {
  return {
    ...nodeLogIO,
    write(fd, buffer, offset, length, position) {
      if (full(buffer.toString("utf8", offset, offset + length))) {
        return Promise.reject(
          Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }),
        );
      }
      return nodeLogIO.write(fd, buffer, offset, length, position);
    },
  };
}

/** A harness that runs `script` as its turn: emits and calls as a runner would, one tick apart. */
/** A harness whose turn calls the echo tool once (id c1) and hands its result to `got`. */
function callsEcho(got: (result: ToolResult) => void): HarnessFactory {
  return scripted(async ({ call }, turn) => {
    got(
      await call(turn, { id: "c1", name: "echo", arguments: { value: "x" } }, new AbortController().signal),
    );
  });
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

let home: string;
let brain: Brain | undefined;
afterEach(async () => {
  await brain?.close();
  brain = undefined;
  rmSync(home, { recursive: true, force: true });
});

function makeBrain(factory: HarnessFactory, io: LogIO = nodeLogIO, journal = false): Brain {
  home ??= tempDir();
  // A clock that never moves: no write counts as slow, so a loaded machine's slow write cannot send the awaited
  // commits to the pool (which commits go where is what the sequential tool-call test counts).
  const inline = new InlineCommits(undefined, undefined, () => 0);
  brain = new Brain({
    store: new FsSessionStore(home, io, undefined, { inline, journal }),
    harnesses: new HarnessRegistry([factory]),
    tools: new ToolRouter([new BuiltinTools()]),
  });
  return brain;
}

const ofTurn = (all: SessionEvent[], turn: string) => all.filter((e) => e.turn === turn).map((e) => e.type);

/** Every turn.started has its turn.settled, and every tool.result follows its tool.call. */
function expectClosedAndPaired(all: SessionEvent[]): void {
  // Ascending; a lost batch's seqs are not given again (jsonl-log.ts, burnedSeq), so gaps may sit where it was.
  expect(all.every((e, i) => i === 0 || e.seq > all[i - 1]!.seq)).toBe(true);
  const started = all.filter((e) => e.type === "turn.started").map((e) => e.turn);
  const settled = all.filter((e) => e.type === "turn.settled").map((e) => e.turn);
  expect(settled).toEqual(started);
  const calls = new Set<string>();
  for (const e of all) {
    if (e.type === "tool.call") calls.add(e.data.id);
    if (e.type === "tool.result") expect(calls.has(e.data.id)).toBe(true);
  }
}

describe("a log that fails mid-turn", () => {
  it("writes nothing of the turn after the first lost batch, and settles it failed", async () => {
    home = tempDir();
    const b = makeBrain(
      scripted(async ({ emit }, turn) => {
        for (let i = 0; i < 8; i++) {
          emit({ type: "assistant.delta", turn, data: { text: `d${i} ` } });
          await tick();
        }
      }),
      diskIO((text) => text.includes('"d3 "')),
    );
    const session = await b.create({ harness: "scripted" });
    const turn = await session.prompt("go");
    const outcome = await turn.settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expect(outcome.error?.message).toMatch(/could not write the event log: .*ENOSPC/);
    const all = await session.log.read(0);
    const texts = all.filter((e) => e.type === "assistant.delta").map((e) => e.data.text);
    // d4..d7 fit, but would sit after the gap; d1 and d2 may share d3's failed batch.
    expect(texts.length).toBeGreaterThan(0);
    expect(texts).toEqual(["d0 ", "d1 ", "d2 "].slice(0, texts.length));
    expect(ofTurn(all, turn.turn).at(-1)).toBe("turn.settled");
    expectClosedAndPaired(all);
  });

  it("starts no turn while the last one cannot be closed out, and closes it out first once it can", async () => {
    home = tempDir();
    let full = false;
    const b = makeBrain(
      scripted(async ({ emit }, turn) => {
        emit({ type: "assistant.delta", turn, data: { text: "kept" } });
        await tick();
        await tick();
        full = true;
        emit({ type: "assistant.delta", turn, data: { text: "lost" } });
        await tick();
      }),
      diskIO(() => full),
    );
    const session = await b.create({ harness: "scripted" });
    const first = await session.prompt("first");
    expect(await first.settled).toMatchObject({ status: "failed", error: { message: /ENOSPC/ } });
    await expect(session.prompt("refused")).rejects.toThrow(/ENOSPC/);
    full = false;
    const again = await session.prompt("again");
    full = false; // the script fills the disk again: this time the test only looks at the order
    await again.settled;
    full = false;
    const all = await session.log.read(0);
    const settledFirst = all.findIndex((e) => e.type === "turn.settled" && e.turn === first.turn);
    const startedAgain = all.findIndex((e) => e.type === "turn.started" && e.turn === again.turn);
    expect(settledFirst).toBeGreaterThan(0);
    expect(settledFirst).toBeLessThan(startedAgain);
    expect(all[settledFirst]?.data).toMatchObject({ status: "failed", error: { message: /ENOSPC/ } });
    expect(all.some((e) => e.type === "user.prompt" && e.data.text === "refused")).toBe(false);
    await b.close();
    brain = undefined;
    expectClosedAndPaired(await session.log.read(0).catch(() => readAll(session.id)));
  });

  it("gives a tool call whose result cannot be logged a result in the close-out, never a result alone", async () => {
    home = tempDir();
    let result: ToolResult | undefined;
    const b = makeBrain(
      callsEcho((r) => {
        result = r;
      }),
      diskIO((text) => text.includes('"type":"tool.result"') && !text.includes("outcome is unknown")),
    );
    const session = await b.create({ harness: "scripted", config: { tools: ["echo"] } });
    const turn = await session.prompt("call");
    expect((await turn.settled).status).toBe("failed");
    expect(result?.content[0]?.text).toBe("x"); // the tool ran; only its result was lost
    const all = await session.log.read(0);
    expect(ofTurn(all, turn.turn)).toEqual([
      "user.prompt",
      "turn.started",
      "tool.call",
      "tool.result",
      "turn.settled",
    ]);
    expect(all.find((e) => e.type === "tool.result")?.data).toMatchObject({ id: "c1", is_error: true });
    expect(session.pendingRequests()).toEqual([]);
    expectClosedAndPaired(all);
  });
});

describe("a request whose answer the log loses", () => {
  it("is answered in the close-out, not left pending after its turn failed", async () => {
    home = tempDir();
    const giveUp = new AbortController();
    const b = makeBrain(
      scripted(async ({ permit }, turn) => {
        await permit(turn, { tool: "deploy" }, giveUp.signal, { id: "p1", unlisted: "ask" });
      }),
      diskIO((text) => text.includes('"type":"permission.resolved"') && !text.includes("turn has ended")),
    );
    const session = await b.create({ harness: "scripted" });
    const turn = await session.prompt("deploy");
    await waitForEvent(session, (e) => e.type === "permission.requested");
    giveUp.abort(); // its deny is the write the disk refuses
    expect((await turn.settled).status).toBe("failed");
    const all = await session.log.read(0);
    expect(ofTurn(all, turn.turn).slice(-2)).toEqual(["permission.resolved", "turn.settled"]);
    expect(all.find((e) => e.type === "permission.resolved")?.data).toMatchObject({
      id: "p1",
      decision: "deny",
    });
    expect(session.pendingRequests()).toEqual([]);
    await expect(session.reply("p1", { decision: "allow" })).rejects.toThrow(/no pending/);
    expectClosedAndPaired(all);
  });
});

describe("requests after a turn the log failed", () => {
  it("are answered by a client's reply: the desk reads the index the close-out rebuilt", async () => {
    home = tempDir();
    let turns = 0;
    let verdict: { decision: string } | undefined;
    const b = makeBrain(
      scripted(async ({ emit, permit }, turn) => {
        if (turns++ === 0) {
          emit({ type: "assistant.delta", turn, data: { text: "lost" } });
          await tick();
          return;
        }
        verdict = await permit(turn, { tool: "deploy" }, new AbortController().signal, {
          id: "p2",
          unlisted: "ask",
        });
      }),
      diskIO((text) => text.includes('"lost"')),
    );
    const session = await b.create({ harness: "scripted" });
    expect((await (await session.prompt("first")).settled).status).toBe("failed");
    const second = await session.prompt("second");
    await waitForEvent(session, (e) => e.type === "permission.requested");
    expect(session.pendingRequests().map((r) => r.id)).toEqual(["p2"]);
    await session.reply("p2", { decision: "allow" });
    expect((await second.settled).status).toBe("completed");
    expect(verdict).toMatchObject({ decision: "allow" });
    expect(session.pendingRequests()).toEqual([]);
    expectClosedAndPaired(await session.log.read(0));
  });
});

describe("a tool call the log cannot hold", () => {
  it("is refused and not run: no result without its call", async () => {
    home = tempDir();
    let deep: Record<string, unknown> = { value: "bottom" };
    for (let i = 0; i < 200_000; i++) deep = { value: "x", next: deep };
    let result: ToolResult | undefined;
    const b = makeBrain(
      scripted(async ({ call }, turn) => {
        result = await call(turn, { id: "c1", name: "echo", arguments: deep }, new AbortController().signal);
      }),
    );
    const session = await b.create({ harness: "scripted", config: { tools: ["echo"] } });
    const turn = await session.prompt("call");
    expect((await turn.settled).status).toBe("completed");
    expect(result).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/cannot be logged/) }],
    });
    const all = await session.log.read(0);
    expect(all.some((e) => e.type === "tool.result" || e.type === "tool.call")).toBe(false);
    expect(all.find((e) => e.type === "harness.warning")?.data.message).toMatch(
      /tool call "c1" \(echo\) was refused/,
    );
    expectClosedAndPaired(all);
  });

  it("is not run when the disk refuses it, and gets no result", async () => {
    home = tempDir();
    let result: ToolResult | undefined;
    const b = makeBrain(
      callsEcho((r) => {
        result = r;
      }),
      diskIO((text) => text.includes('"type":"tool.call"')),
    );
    const session = await b.create({ harness: "scripted", config: { tools: ["echo"] } });
    const turn = await session.prompt("call");
    expect((await turn.settled).status).toBe("failed");
    expect(result).toMatchObject({ is_error: true });
    const all = await session.log.read(0);
    expect(ofTurn(all, turn.turn)).toEqual(["user.prompt", "turn.started", "turn.settled"]);
    expectClosedAndPaired(all);
  });
});

describe("opening a log with turns left open", () => {
  it("closes out every one of them, not only the last", async () => {
    home = tempDir();
    const b = makeBrain(scripted(async () => {}));
    const session = await b.create({ harness: "scripted" });
    const id = session.id;
    await b.close();
    brain = undefined;
    const ts = new Date().toISOString();
    const line = (seq: number, turn: string, type: string) =>
      `${JSON.stringify({ seq, ts, session: id, turn, type, data: type === "user.prompt" ? { text: "x" } : {} })}\n`;
    const path = new FsSessionStore(home).paths(id).events;
    const last = (await readAll(id)).length;
    appendFileSync(
      path,
      line(last + 1, "T1", "user.prompt") +
        line(last + 2, "T1", "turn.started") +
        line(last + 3, "T2", "user.prompt") +
        line(last + 4, "T2", "turn.started"),
    );
    const reopened = await makeBrain(scripted(async () => {})).session(id);
    const all = await reopened.log.read(0);
    const settled = all.filter((e) => e.type === "turn.settled");
    expect(settled.map((e) => e.turn)).toEqual(["T1", "T2"]);
    expect(settled[0]?.data).toMatchObject({ status: "failed", error: { code: "brain_error" } });
    expectClosedAndPaired(all);
  });
});

async function readAll(id: string): Promise<SessionEvent[]> {
  const { readEventsFile } = await import("../store/fs/index.js");
  return readEventsFile(new FsSessionStore(home).paths(id).events);
}

describe("a session that fails to open", () => {
  it("lets go of its log, so a later open can take it", async () => {
    home = tempDir();
    const make = (harnesses: HarnessRegistry) =>
      new Brain({ store: new FsSessionStore(home), harnesses, tools: new ToolRouter([new BuiltinTools()]) });
    const first = make(new HarnessRegistry([scripted(async () => {})]));
    await first.create({ harness: "scripted", id: "s1" });
    await first.close();
    // A host without the session's harness opens the log, then fails: the log must not stay locked.
    brain = make(new HarnessRegistry([]));
    await expect(brain.session("s1")).rejects.toThrow(/scripted/);
    const later = make(new HarnessRegistry([scripted(async () => {})]));
    const session = await later.session("s1");
    expect(session.id).toBe("s1");
    await later.close();
  });
});

describe("sequential tool calls", () => {
  // Through the journal too: an awaited commit while no other log commits is written (and synced) on the loop's
  // thread straight into its log's file, not through the pool and the journal.
  it.each([false, true])(
    "write each result with the harness's next call: one commit per round trip, results after their calls (journal %s)",
    async (journal) => {
      home = tempDir();
      const io = testIO(true, { writeNow: true });
      // Through the journal every commit writes its log's file on the loop's thread (no sync: the journal's write
      // is the durable one); only a commit written there alone is synced there too.
      const syncNow = io.datasyncNow;
      let syncedNow = 0;
      if (syncNow)
        io.datasyncNow = (fd) => {
          syncedNow++;
          syncNow(fd);
        };
      const b = makeBrain(
        scripted(async ({ call }, turn) => {
          for (let i = 0; i < 5; i++) {
            const args = { id: `c${i}`, name: "echo", arguments: { value: `v${i}` } };
            const result = await call(turn, args, new AbortController().signal);
            expect(result.content[0]).toMatchObject({ text: `v${i}` });
          }
        }),
        io,
        journal,
      );
      const session = await b.create({ harness: "scripted", config: { tools: ["echo"] } });
      const commits: string[][] = [];
      session.log.subscribe((batch) =>
        commits.push(batch.map((e) => `${e.type}:${(e.data as { id?: string }).id ?? ""}`)),
      );
      const turn = await session.prompt("go");
      expect(await turn.settled).toMatchObject({ status: "completed" });
      for (let i = 0; i < 4; i++) {
        const shared = commits.find((c) => c.includes(`tool.result:c${i}`));
        expect(shared).toEqual([`tool.result:c${i}`, `tool.call:c${i + 1}`]);
      }
      // The harness waits on each call's commit, and no other log commits: each is written on the loop's thread
      // where writes are O_DSYNC (elsewhere every commit needs its fdatasync, through the pool).
      if (journal) expect(syncedNow).toBe(5);
      else expect(io.counts.now).toBe(io.syncWrites ? 5 : 0);
      expectClosedAndPaired(await session.log.read(0));
    },
  );
});

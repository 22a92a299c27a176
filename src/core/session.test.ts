import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { NewEvent } from "../protocol/events.js";
import type { ToolResult, ToolSchema } from "../protocol/runner.js";
import {
  answerPermissionOnce,
  events,
  makeBrain,
  type TestBrain,
  textOf,
  waitForEvent,
} from "../testing/brain.js";
import type { ToolService } from "../tools/tool-service.js";
import type { HarnessFactory } from "./harness.js";

/** A tool that never finishes on its own: it answers only when the call is aborted. */
class WaitTool implements ToolService {
  async list(): Promise<ToolSchema[]> {
    return [{ name: "wait", input_schema: { type: "object" } }];
  }
  call(_name: string, _args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    return new Promise((resolve) =>
      signal.addEventListener("abort", () =>
        resolve({ content: [{ type: "text", text: "aborted" }], is_error: true }),
      ),
    );
  }
}

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

describe("a session on the echo runner", () => {
  it("logs a whole turn with dense seqs, from session.opened to turn.settled", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    const turn = await session.prompt("hello there");
    expect(await turn.settled).toEqual({ turn: turn.turn, status: "completed" });
    const all = await events(session);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all[0]!.type).toBe("session.opened");
    expect(all.slice(1, 3).map((e) => e.type)).toEqual(["user.prompt", "turn.started"]);
    expect(all.at(-1)).toMatchObject({
      type: "turn.settled",
      turn: turn.turn,
      data: { status: "completed" },
    });
    expect(textOf(all)).toBe("echo #1: hello there");
    expect(all.find((e) => e.type === "assistant.message")?.data).toMatchObject({ usage: { input: 11 } });
  });

  it("routes a reverse tool call: logged call, dispatched, logged result, answered", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo", config: { tools: ["echo"] } });
    await (await session.prompt("echo: hi")).settled;
    const all = await events(session);
    const call = all.find((e) => e.type === "tool.call");
    const result = all.find((e) => e.type === "tool.result");
    expect(call?.data).toMatchObject({ name: "echo", arguments: { value: "hi" } });
    expect(result?.data).toEqual({
      id: (call!.data as { id: string }).id,
      content: [{ type: "text", text: "hi" }],
      is_error: false,
    });
    expect(call!.seq).toBeLessThan(result!.seq);
    expect(textOf(all)).toContain("echo returned: hi");
    expect(session.pendingRequests()).toEqual([]);
  });

  it("answers a call to an unbound tool, or with bad arguments, with an error result and goes on", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo", config: { tools: ["echo"] } });
    await (await session.prompt('call the tool "rm" with {"path":"/"}')).settled;
    await (await session.prompt('call the tool "echo" with {"nope":1}')).settled;
    const results = (await events(session)).filter((e) => e.type === "tool.result").map((e) => e.data);
    expect(results[0]).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/not bound.*bound tools: echo/) }],
    });
    expect(results[1]).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/invalid arguments.*value/) }],
    });
    const settled = (await events(session)).filter((e) => e.type === "turn.settled").map((e) => e.data);
    expect(settled).toEqual([{ status: "completed" }, { status: "completed" }]);
  });

  it("refuses a second prompt while a turn runs", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo", config: { options: { delay_ms: 20 } } });
    const first = await session.prompt("one two three four five six");
    await expect(session.prompt("again")).rejects.toThrow(/still running/);
    await first.settled;
  });

  it("steers a running turn and interrupts a streaming one", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo", config: { options: { delay_ms: 30 } } });
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    const turn = await session.prompt(words);
    await waitForEvent(session, (e) => e.type === "assistant.delta");
    await session.steer("go left");
    await waitForEvent(
      session,
      (e) => e.type === "assistant.delta" && (e.data as { text: string }).text.includes("steered"),
    );
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    const all = await events(session);
    expect(textOf(all)).toContain("[steered: go left]");
    expect(textOf(all)).not.toContain("w39");
    expect(all.map((e) => e.type)).toContain("user.interrupt");
    // The session goes on.
    expect((await (await session.prompt("next")).settled).status).toBe("completed");
  });

  it("interrupts a turn while a tool call waits, and keeps earlier checkpoint files intact", async () => {
    t = makeBrain({ tools: [new WaitTool()] });
    const session = await t.brain.create({ harness: "echo", config: { tools: ["wait"] } });
    await (await session.prompt("first")).settled;
    const before = await session.checkpoint();
    const turn = await session.prompt('call the tool "wait" with {}');
    await waitForEvent(session, (e) => e.type === "tool.call");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    const result = (await events(session)).find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/cancelled/) }],
    });
    expect(session.pendingRequests()).toEqual([]);
    const after = await session.checkpoint();
    expect(after.files[0]!.size).toBeGreaterThan(before.files[0]!.size);
  });

  it("checkpoints, restores byte for byte and forks a session that continues the conversation", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    await (await session.prompt("one")).settled;
    await (await session.prompt("two")).settled;
    const checkpoint = await session.checkpoint();
    expect((await events(session)).at(-1)).toMatchObject({
      type: "checkpoint.created",
      data: { id: checkpoint.id },
    });
    const fork = await t.brain.fork(session.id);
    const turn = await fork.prompt("three");
    await turn.settled;
    expect(textOf(await events(fork), turn.turn)).toBe("echo #3: three");
    expect((await events(fork))[0]).toMatchObject({
      type: "session.opened",
      data: { forked_from: { session: session.id, checkpoint: checkpoint.id } },
    });
  });

  it("refuses a checkpoint whose files hold the provider key", async () => {
    t = makeBrain({ provider: { api_key: "sk-test-very-secret-key" } });
    const session = await t.brain.create({ harness: "echo" });
    await (await session.prompt("my key is sk-test-very-secret-key")).settled;
    const failure = session.checkpoint();
    await expect(failure).rejects.toThrow(/provider/i);
    await expect(session.checkpoint()).rejects.not.toThrow(/sk-test-very-secret-key/);
  });

  it("opens passively after a restart and closes out a turn the host died in, exactly once", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo", config: { tools: ["echo"] } });
    await (await session.prompt("before the crash")).settled;
    const id = session.id;
    await t.brain.close();
    // A crash mid-turn: the log ends with a started turn and a tool call with no result.
    const path = t.store.paths(id).events;
    const lastSeq = (await t.store.openLog(id).then(async (log) => {
      const seq = log.lastSeq;
      await log.close();
      return seq;
    })) as number;
    const ts = new Date().toISOString();
    const orphan = [
      { seq: lastSeq + 1, ts, session: id, turn: "T9", type: "user.prompt", data: { text: "echo: x" } },
      { seq: lastSeq + 2, ts, session: id, turn: "T9", type: "turn.started", data: {} },
      {
        seq: lastSeq + 3,
        ts,
        session: id,
        turn: "T9",
        type: "tool.call",
        data: { id: "c1", name: "echo", arguments: { value: "x" } },
      },
    ];
    appendFileSync(path, orphan.map((e) => `${JSON.stringify(e)}\n`).join(""));
    // The runner had recorded the prompt before it called the tool, as the echo runner does.
    appendFileSync(
      join(t.store.paths(id).native, "echo.jsonl"),
      `${JSON.stringify({ role: "user", text: "echo: x" })}\n`,
    );

    const restarted = makeBrain({ home: t.home });
    try {
      const reopened = await restarted.brain.session(id);
      const all = await events(reopened);
      const tail = all.slice(-2);
      expect(tail[0]).toMatchObject({ type: "tool.result", turn: "T9", data: { id: "c1", is_error: true } });
      expect(tail[1]).toMatchObject({
        type: "turn.settled",
        turn: "T9",
        data: { status: "failed", error: { code: "brain_error" } },
      });
      expect(reopened.pendingRequests()).toEqual([]);
      // No harness was started by opening: the native transcript still has one turn.
      expect((await events(reopened)).filter((e) => e.type === "assistant.message")).toHaveLength(1);
      const turn = await reopened.prompt("after the restart");
      await turn.settled;
      expect(textOf(await events(reopened), turn.turn)).toBe("echo #3: after the restart");
    } finally {
      await restarted.brain.close();
    }
    const again = makeBrain({ home: t.home });
    try {
      const reopened = await again.brain.session(id);
      const results = (await events(reopened)).filter((e) => e.type === "tool.result" && e.turn === "T9");
      expect(results).toHaveLength(1);
    } finally {
      await again.brain.close();
    }
  });

  it("answers the requests of a turn the host died in when it closes the turn out, and keeps others pending", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    const request = (type: string, id: string, turn?: string) => ({
      type,
      ...(turn ? { turn } : {}),
      data: { id },
    });
    await session.log.append([
      request("permission.requested", "p0"), // of no turn: it waits for a client across restarts
      { type: "user.prompt", turn: "T9", data: { text: "x" } },
      { type: "turn.started", turn: "T9", data: {} },
      { ...request("permission.requested", "p1", "T9"), data: { id: "p1", tool: "echo" } },
      { ...request("question.requested", "q1", "T9"), data: { id: "q1", question: "which?" } },
    ] as NewEvent[]);
    await t.brain.close();
    const restarted = makeBrain({ home: t.home });
    try {
      const reopened = await restarted.brain.session(session.id);
      const tail = (await events(reopened)).slice(-3);
      const reason = "the host stopped while the request was pending; its turn has ended";
      expect(tail).toMatchObject([
        { type: "permission.resolved", turn: "T9", data: { id: "p1", decision: "deny", reason } },
        { type: "question.answered", turn: "T9", data: { id: "q1", answer: "", reason } },
        { type: "turn.settled", turn: "T9", data: { status: "failed" } },
      ]);
      expect(reopened.pendingRequests().map((r) => r.id)).toEqual(["p0"]);
      await expect(reopened.reply("p1", { decision: "allow" })).rejects.toThrow(/no pending/);
    } finally {
      await restarted.brain.close();
    }
  });

  it("answers a pending permission exactly once, even across a restart", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    await session.log.append([{ type: "permission.requested", data: { id: "p1", tool: "echo" } }]);
    await t.brain.close();
    const restarted = makeBrain({ home: t.home });
    try {
      const reopened = await restarted.brain.session(session.id);
      expect(reopened.pendingRequests()).toMatchObject([{ kind: "permission.requested", id: "p1" }]);
      const answers = await Promise.allSettled([
        reopened.answer({ type: "permission.resolved", data: { id: "p1", decision: "allow" } }),
        reopened.answer({ type: "permission.resolved", data: { id: "p1", decision: "deny" } }),
      ]);
      expect(answers.map((a) => a.status)).toEqual(["fulfilled", "rejected"]);
      const resolved = (await events(reopened)).filter((e) => e.type === "permission.resolved");
      expect(resolved).toEqual([expect.objectContaining({ data: { id: "p1", decision: "allow" } })]);
    } finally {
      await restarted.brain.close();
    }
  });
});

describe("closing a session whose harness is still starting", () => {
  it("waits for the start, then closes the harness: nothing is left running on a closed session", async () => {
    let started = () => {};
    const gate = new Promise<void>((resolve) => {
      started = resolve;
    });
    const life: string[] = [];
    const slow: HarnessFactory = {
      name: "slow",
      supportsSteering: false,
      async open() {
        life.push("opening");
        await gate; // a runner process still starting
        life.push("opened");
        return {
          prompt: async () => ({ interrupted: false }),
          steer: async () => {},
          interrupt: async () => {},
          checkpoint: async () => [],
          close: async () => {
            life.push("closed");
          },
        };
      },
    };
    t = makeBrain({ factories: [slow] });
    const session = await t.brain.create({ harness: "slow" });
    const turn = await session.prompt("hi");
    while (!life.includes("opening")) await new Promise((resolve) => setImmediate(resolve));
    const closing = session.close();
    // The close has interrupted the turn and gone on (one macrotask after its interrupt is logged) before the
    // harness is up.
    await waitForEvent(session, (e) => e.type === "user.interrupt");
    await new Promise((resolve) => setImmediate(resolve));
    started();
    await closing;
    expect(life).toEqual(["opening", "opened", "closed"]);
    expect((await turn.settled).status).not.toBe("completed");
  });
});

describe("native files", () => {
  it("keep the echo transcript in the session's native dir", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    await (await session.prompt("x")).settled;
    const manifest = await session.checkpoint();
    expect(manifest.files.map((f) => f.path)).toEqual(["echo.jsonl"]);
    expect(join(t.store.paths(session.id).native, "echo.jsonl")).toContain(session.id);
  });
});

describe("permissions: the host decides", () => {
  async function askSession(policy: import("../protocol/permissions.js").PermissionPolicy) {
    t = makeBrain();
    return t.brain.create({ harness: "echo", config: { tools: ["echo"] }, permissions: policy });
  }

  it("asks a client and runs the tool once it is allowed", async () => {
    const session = await askSession({ tools: { "ec*": "ask" } });
    const turn = await session.prompt("echo: may I?");
    const request = await answerPermissionOnce(session, "allow");
    expect(request).toMatchObject({ tool: "echo", arguments: { value: "may I?" } });
    await turn.settled;
    const result = (await events(session)).find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({ is_error: false, content: [{ text: "may I?" }] });
  });

  it("turns a client's denial into an error result the model sees", async () => {
    const session = await askSession({ tools: { echo: "ask" } });
    const turn = await session.prompt("echo: may I?");
    await answerPermissionOnce(session, "deny", "not today");
    expect((await turn.settled).status).toBe("completed");
    const result = (await events(session)).find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/denied: not today/) }],
    });
  });

  it("denies when no client answers in time, and never hangs", async () => {
    const session = await askSession({ tools: { echo: "ask" }, ask_timeout_ms: 50 });
    await (await session.prompt("echo: anyone?")).settled;
    const all = await events(session);
    expect(all.find((e) => e.type === "permission.resolved")?.data).toMatchObject({
      decision: "deny",
      reason: expect.stringMatching(/no client answered within 0.05 s/),
    });
    expect(all.find((e) => e.type === "tool.result")?.data).toMatchObject({ is_error: true });
    expect(session.pendingRequests()).toEqual([]);
  });

  it("applies deny rules and the default without asking", async () => {
    const session = await askSession({ default: "deny", tools: { nothing: "allow" } });
    await (await session.prompt("echo: no")).settled;
    const all = await events(session);
    expect(all.some((e) => e.type === "permission.requested")).toBe(false);
    expect(all.find((e) => e.type === "tool.result")?.data).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/policy denies it/) }],
    });
  });

  it("denies a pending ask when the turn is interrupted", async () => {
    const session = await askSession({ tools: { echo: "ask" } });
    const turn = await session.prompt("echo: wait for me");
    await waitForEvent(session, (e) => e.type === "permission.requested");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    const resolved = (await events(session)).filter((e) => e.type === "permission.resolved");
    expect(resolved).toHaveLength(1);
    expect(resolved[0]?.data).toMatchObject({ decision: "deny", reason: "the turn was interrupted" });
  });
});

// The runner SDK (sdk/ts) on its own: framing, per-attachment dispatch, events, reverse tool calls, interrupts,
// error codes and bad frames. Every frame it writes is decoded with Brain's strict decoder (see harness.ts).
import { describe, expect, it } from "vitest";
import { type Attachment, RunnerFailure, type Turn } from "../../sdk/ts/index.js";
import { MAX_FRAME } from "../../src/protocol/runner.js";
import { type Frame, OPEN_PARAMS, reply, runSdk } from "./harness.js";

const open = (attachment: string, id = `open-${attachment}`) => ({
  attachment,
  id,
  method: "open",
  params: OPEN_PARAMS,
});
const prompt = (attachment: string, turn: string, id: string, text = "hi") => ({
  attachment,
  turn,
  id,
  method: "prompt",
  params: { text },
});
const control = (method: "checkpoint" | "detach", attachment: string, id: string) => ({
  attachment,
  id,
  method,
  params: null,
});

/** A promise the test settles by hand. */
function gate<T = void>() {
  let open: (value: T) => void = () => {};
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

function simple(handlers: Partial<Attachment> = {}): Attachment {
  return {
    async prompt(text: string, turn: Turn) {
      turn.delta(text);
      turn.message({ text, usage: { input: 1, output: 1 }, stop_reason: "stop" });
    },
    checkpoint: () => [{ path: "notes.jsonl", size: 3, append_only: true }],
    ...handlers,
  };
}

describe("runner SDK: dispatch", () => {
  it("serves two attachments side by side, each reply echoing its attachment and turn", async () => {
    const sdk = runSdk({ open: () => ({ ...simple(), metadata: { tools: ["echo"] } }) });
    sdk.send(open("A"));
    sdk.send(open("B"));
    expect(await sdk.next(reply("open-A"))).toEqual({
      attachment: "A",
      id: "open-A",
      result: { tools: ["echo"] },
    });
    await sdk.next(reply("open-B"));
    sdk.send(prompt("A", "TA", "p1", "to A"));
    sdk.send(prompt("B", "TB", "p2", "to B"));
    expect(await sdk.next(reply("p1"))).toEqual({ attachment: "A", turn: "TA", id: "p1", result: {} });
    expect(await sdk.next(reply("p2"))).toEqual({ attachment: "B", turn: "TB", id: "p2", result: {} });
    const events = sdk.frames.filter((f) => "event" in f);
    expect(events.filter((e) => e.attachment === "A").map((e) => [e.turn, e.event, e.data.text])).toEqual([
      ["TA", "assistant.delta", "to A"],
      ["TA", "assistant.message", "to A"],
    ]);
    expect(events.filter((e) => e.attachment === "B").map((e) => e.turn)).toEqual(["TB", "TB"]);

    sdk.send(control("checkpoint", "A", "c1"));
    expect(await sdk.next(reply("c1"))).toEqual({
      attachment: "A",
      id: "c1",
      result: [{ path: "notes.jsonl", size: 3, append_only: true }],
    });
    sdk.send(control("detach", "A", "d1"));
    expect(await sdk.next(reply("d1"))).toMatchObject({ attachment: "A", result: {} });
    // A is gone, B is not.
    sdk.send(prompt("A", "TA2", "p3"));
    sdk.send(prompt("B", "TB2", "p4"));
    expect(await sdk.next(reply("p3"))).toMatchObject({ turn: "TA2", error: { code: "brain_error" } });
    expect((await sdk.next(reply("p3"))).error.message).toMatch(/not open/);
    expect(await sdk.next(reply("p4"))).toMatchObject({ result: {} });
  });

  it("refuses a second open of an attachment, a prompt while one runs, and a checkpoint mid-turn", async () => {
    const release = gate();
    const sdk = runSdk({
      open: () =>
        simple({
          async prompt() {
            await release.promise;
          },
        }),
    });
    sdk.send(open("A"));
    await sdk.next(reply("open-A"));
    sdk.send(open("A", "again"));
    expect((await sdk.next(reply("again"))).error).toMatchObject({
      code: "brain_error",
      message: /already open/,
    });
    sdk.send(prompt("A", "T1", "p1"));
    sdk.send(prompt("A", "T2", "p2"));
    expect((await sdk.next(reply("p2"))).error.message).toMatch(/T1 is still running/);
    sdk.send(control("checkpoint", "A", "c1"));
    expect((await sdk.next(reply("c1"))).error.message).toMatch(/still running/);
    release.open();
    expect(await sdk.next(reply("p1"))).toMatchObject({ turn: "T1", result: {} });
  });

  it("keeps a RunnerFailure's code and reports any other error as brain_error", async () => {
    const sdk = runSdk({
      open: (params) => {
        if (params.session_id === "bad") throw new Error("cannot read the dir");
        return simple({
          async prompt(text) {
            if (text === "rate") throw new RunnerFailure("provider_error", "429 slow down");
            throw new TypeError("oops");
          },
        });
      },
    });
    sdk.send({ ...open("X"), params: { ...OPEN_PARAMS, session_id: "bad" } });
    expect((await sdk.next(reply("open-X"))).error).toEqual({
      code: "brain_error",
      message: "cannot read the dir",
    });
    sdk.send(open("A"));
    sdk.send(prompt("A", "T1", "p1", "rate"));
    expect(await sdk.next(reply("p1"))).toMatchObject({
      error: { code: "provider_error", message: "429 slow down" },
    });
    sdk.send(prompt("A", "T2", "p2", "boom"));
    expect(await sdk.next(reply("p2"))).toMatchObject({ error: { code: "brain_error", message: "oops" } });
  });

  it("refuses an invalid result with a brain_error instead of sending it", async () => {
    const sdk = runSdk({
      open: () => simple({ checkpoint: () => [{ path: "", size: -1, append_only: true }] }),
    });
    sdk.send(open("A"));
    sdk.send(control("checkpoint", "A", "c1"));
    expect((await sdk.next(reply("c1"))).error).toMatchObject({
      code: "brain_error",
      message: /invalid checkpoint/,
    });
  });
});

describe("runner SDK: turns", () => {
  it("calls a tool by reverse tool.call and resolves with Brain's reply", async () => {
    const sdk = runSdk({
      open: () =>
        simple({
          async prompt(_text, turn) {
            const result = await turn.callTool("echo", { value: "ping" }, { id: "call_7" });
            turn.delta(result.content[0]!.text);
          },
        }),
    });
    sdk.send(open("A"));
    sdk.send(prompt("A", "T1", "p1"));
    const call = await sdk.next((f) => f.method === "tool.call");
    expect(call).toMatchObject({
      attachment: "A",
      turn: "T1",
      params: { id: "call_7", name: "echo", arguments: { value: "ping" } },
    });
    sdk.send({
      attachment: "A",
      turn: "T1",
      id: call.id,
      result: { content: [{ type: "text", text: "pong" }], is_error: false },
    });
    await sdk.next(reply("p1"));
    expect(sdk.frames.find((f) => f.event === "assistant.delta")?.data.text).toBe("pong");
  });

  it("on interrupt aborts the turn's signal and its waiting tool call, and settles as interrupted", async () => {
    let seen: Turn | undefined;
    const sdk = runSdk({
      open: () =>
        simple({
          async prompt(_text, turn) {
            seen = turn;
            await turn.callTool("wait", {}); // rejects with TurnInterrupted, uncaught: the SDK settles it
          },
        }),
    });
    sdk.send(open("A"));
    sdk.send(prompt("A", "T1", "p1"));
    const call = await sdk.next((f) => f.method === "tool.call");
    sdk.send({ attachment: "A", turn: "T1", id: "i1", method: "interrupt", params: null });
    expect(await sdk.next(reply("i1"))).toEqual({ attachment: "A", turn: "T1", id: "i1", result: {} });
    expect(await sdk.next(reply("p1"))).toEqual({
      attachment: "A",
      turn: "T1",
      id: "p1",
      result: { interrupted: true },
    });
    expect(seen?.signal.aborted).toBe(true);
    await expect(seen!.callTool("echo", {})).rejects.toThrow(/over/);
    // Brain's late answer to the cancelled call is dropped without a word; so is a repeated interrupt.
    sdk.send({ attachment: "A", turn: "T1", id: call.id, result: { content: [], is_error: true } });
    sdk.send({ attachment: "A", turn: "T1", id: "i2", method: "interrupt", params: null });
    await sdk.next(reply("i2"));
    expect(sdk.logs).toEqual([]);
    expect(sdk.frames.filter((f) => f.method === "tool.call")).toHaveLength(1);
  });

  it("fails a tool call too large to frame alone, leaving nothing waiting for a reply that cannot come", async () => {
    const sdk = runSdk({
      open: () =>
        simple({
          async prompt(_text, turn) {
            const big = turn.callTool("echo", { value: "x".repeat(MAX_FRAME) });
            await expect(big).rejects.toThrow(/4 MiB cap/);
            const result = await turn.callTool("echo", { value: "small" });
            turn.delta(result.content[0]!.text);
          },
        }),
    });
    sdk.send(open("A"));
    sdk.send(prompt("A", "T1", "p1"));
    const call = await sdk.next((f) => f.method === "tool.call");
    expect(call.params.arguments).toEqual({ value: "small" });
    const host = sdk.host as unknown as { toolWaits: Map<string, unknown>; abandoned: Set<string> };
    expect([...host.toolWaits.keys()]).toEqual([call.id]);
    sdk.send({
      attachment: "A",
      turn: "T1",
      id: call.id,
      result: { content: [{ type: "text", text: "ok" }] },
    });
    await sdk.next(reply("p1"));
    expect(host.toolWaits.size).toBe(0);
    expect(host.abandoned.size).toBe(0);
  });

  it("gives a tool call with an empty id a fresh one, and fails alone one with no name or non-object arguments", async () => {
    const sdk = runSdk({
      open: () =>
        simple({
          async prompt(_text, turn) {
            await expect(turn.callTool("", {})).rejects.toThrow(/tool name must be a non-empty string/);
            const list = [1] as unknown as Record<string, unknown>;
            await expect(turn.callTool("echo", list)).rejects.toThrow(/must be a JSON object, not an array/);
            const result = await turn.callTool("echo", { value: "v" }, { id: "" });
            turn.delta(result.content[0]!.text);
          },
        }),
    });
    sdk.send(open("A"));
    sdk.send(prompt("A", "T1", "p1"));
    const call = await sdk.next((f) => f.method === "tool.call");
    expect(call.params.id).toBe(`call_${call.id}`);
    sdk.send({
      attachment: "A",
      turn: "T1",
      id: call.id,
      result: { content: [{ type: "text", text: "ok" }], is_error: false },
    });
    expect(await sdk.next(reply("p1"))).toMatchObject({ result: {} });
    expect(sdk.frames.filter((f) => f.method === "tool.call")).toHaveLength(1);
  });

  it("queues steering on the turn when the attachment has no steer handler, and refuses it for another turn", async () => {
    const steered = gate();
    const sdk = runSdk({
      open: () =>
        simple({
          async prompt(_text, turn) {
            await steered.promise;
            turn.delta(turn.takeSteering().join("+"));
          },
        }),
    });
    sdk.send(open("A"));
    sdk.send(prompt("A", "T1", "p1"));
    for (const [id, text] of [
      ["s1", "left"],
      ["s2", "right"],
    ] as const) {
      sdk.send({ attachment: "A", turn: "T1", id, method: "steer", params: { text } });
      await sdk.next(reply(id));
    }
    sdk.send({ attachment: "A", turn: "T0", id: "s3", method: "steer", params: { text: "late" } });
    expect((await sdk.next(reply("s3"))).error.message).toMatch(/T0 is not running/);
    steered.open();
    await sdk.next(reply("p1"));
    expect(sdk.frames.find((f) => f.event === "assistant.delta")?.data.text).toBe("left+right");
  });

  it("splits a very long delta so that no frame passes 4 MiB", async () => {
    const long = "é✓".repeat(700_000);
    const sdk = runSdk({ open: () => simple() });
    sdk.send(open("A"));
    sdk.send(prompt("A", "T1", "p1", long));
    await sdk.next(reply("p1"));
    const deltas = sdk.frames.filter((f) => f.event === "assistant.delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.data.text).join("")).toBe(long);
    for (const d of deltas) expect(Buffer.byteLength(JSON.stringify(d))).toBeLessThanOrEqual(MAX_FRAME);
  });
});

describe("runner SDK: framing and bad frames", () => {
  it("splits on \\n only and joins a frame written in pieces, multi-byte characters included", async () => {
    const sdk = runSdk({ open: () => simple() });
    sdk.send(open("A"));
    const bytes = Buffer.from(`${JSON.stringify(prompt("A", "T1", "p1", "a\u2028b\u2029c ✓"))}\n`);
    for (let i = 0; i < bytes.length; i += 7) sdk.write(bytes.subarray(i, i + 7));
    await sdk.next(reply("p1"));
    expect(sdk.frames.find((f) => f.event === "assistant.delta")?.data.text).toBe("a\u2028b\u2029c ✓");
  });

  it("answers a request that breaks the schema with brain_error, and only logs what cannot be answered", async () => {
    const sdk = runSdk({ open: () => simple() });
    sdk.send(open("A"));
    sdk.send({ ...prompt("A", "T1", "p1"), extra: true });
    expect((await sdk.next(reply("p1"))).error).toMatchObject({ code: "brain_error", message: /extra/ });
    sdk.write("this is not json\n");
    sdk.send({ hello: "world" });
    sdk.send(prompt("A", "T2", "p2"));
    await sdk.next(reply("p2"));
    expect(sdk.logs).toHaveLength(2);
    expect(sdk.logs[0]).toMatch(/not JSON/);
  });

  it("handles the frames that follow a broken one after it, in the order they came", async () => {
    const sdk = runSdk({ open: () => simple() });
    // In one chunk: the open breaks the schema (so the schemas load to word its error), the prompt after it
    // passes the fast check but must not overtake it, so it finds no open attachment.
    sdk.write(`${JSON.stringify({ ...open("A"), extra: 1 })}\n${JSON.stringify(prompt("A", "T1", "p1"))}\n`);
    expect((await sdk.next(reply("open-A"))).error.message).toMatch(/extra/);
    expect((await sdk.next(reply("p1"))).error.message).toMatch(/not open/);
    expect(sdk.frames.map((f) => f.id)).toEqual(["open-A", "p1"]);
  });

  it("fails a waiting tool call when Brain's reply to it does not decode", async () => {
    const sdk = runSdk({
      open: () =>
        simple({
          async prompt(_text, turn) {
            await turn.callTool("echo", {});
          },
        }),
    });
    sdk.send(open("A"));
    sdk.send(prompt("A", "T1", "p1"));
    const call = await sdk.next((f: Frame) => f.method === "tool.call");
    sdk.send({
      attachment: "A",
      turn: "T1",
      id: call.id,
      result: { content: "not a list", is_error: false },
    });
    expect((await sdk.next(reply("p1"))).error).toMatchObject({ code: "brain_error", message: /bad frame/ });
  });

  it("stops with exit code 1 on a line over the 4 MiB cap", async () => {
    const sdk = runSdk({ open: () => simple() });
    sdk.write(Buffer.alloc(MAX_FRAME + 10, "a"));
    await sdk.closed;
    expect(sdk.exitCode()).toBe(1);
    expect(sdk.logs.join("\n")).toMatch(/4 MiB/);
  });

  it("at the end of stdin aborts running turns, detaches every attachment and exits 0", async () => {
    const detached: string[] = [];
    let aborted = false;
    const sdk = runSdk({
      open: (_params, info) =>
        simple({
          prompt: (_text, turn) =>
            new Promise((resolve) =>
              turn.signal.addEventListener("abort", () => {
                aborted = true;
                resolve();
              }),
            ),
          detach: () => {
            detached.push(info.id);
          },
        }),
    });
    sdk.send(open("A"));
    sdk.send(open("B"));
    await sdk.next(reply("open-B"));
    sdk.send(prompt("A", "T1", "p1"));
    sdk.end();
    await sdk.closed;
    expect(sdk.exitCode()).toBe(0);
    expect(aborted).toBe(true);
    expect(detached.sort()).toEqual(["A", "B"]);
  });
});

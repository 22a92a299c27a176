// When an interrupt cancels the running turn's pending tool calls: at once, or, for a harness that asks for it
// (Harness.cancelsToolsAfterInterrupt: a CLI whose tool results come over MCP, apart from its interrupt), once the
// harness has taken the interrupt. A cancelled result that reached opencode before its abort went on to the model.
import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, quietHarness, type TestBrain, waitForEvent } from "../testing/brain.js";
import type { HarnessFactory } from "./harness.js";
import type { ToolService } from "./tools.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** A tool "wait" whose calls end only when cancelled; `signals` holds each call's. */
function waitTool() {
  const signals: AbortSignal[] = [];
  const tools: ToolService = {
    list: async () => [{ name: "wait", input_schema: { type: "object" } }],
    call: (_name, _args, signal) => {
      signals.push(signal);
      return new Promise((resolve) => {
        const cancelled = () => resolve({ content: [{ type: "text", text: "cancelled" }], is_error: true });
        signal.addEventListener("abort", cancelled, { once: true });
      });
    },
  };
  return { tools, signals };
}

/** A harness whose turn calls "wait" and then ends; its interrupt() ends when the test says, taken or failed. */
function heldInterrupt(cancelsToolsAfterInterrupt: boolean) {
  let take!: (ok: boolean) => void;
  const taken = new Promise<void>((resolve, reject) => {
    take = (ok) => (ok ? resolve() : reject(new Error("the agent did not answer the interrupt")));
  });
  const factory: HarnessFactory = {
    name: "held",
    supportsSteering: false,
    open: async (options) =>
      quietHarness({
        cancelsToolsAfterInterrupt,
        async prompt(_text, ctx) {
          await options.call(ctx.turn, { id: "c1", name: "wait", arguments: {} }, ctx.signal);
          return { interrupted: true };
        },
        interrupt: () => taken,
      }),
  };
  return { factory, take };
}

/** A turn of the held harness waiting in its tool call, then interrupted. */
async function interruptedInCall(cancelsToolsAfterInterrupt: boolean) {
  const { tools, signals } = waitTool();
  const { factory, take } = heldInterrupt(cancelsToolsAfterInterrupt);
  t = makeBrain({ factories: [factory], tools: [tools] });
  const session = await t.brain.create({ harness: "held", config: { tools: ["wait"] } });
  const turn = await session.prompt("go");
  await expect.poll(() => signals.length, { timeout: 30_000 }).toBe(1);
  const interrupting = session.interrupt();
  interrupting.catch(() => {});
  return { session, turn, interrupting, take, call: signals[0] as AbortSignal };
}

describe("the pending tool calls of an interrupted turn", () => {
  it("are cancelled at once, while the harness still takes the interrupt", async () => {
    const { turn, interrupting, take, call } = await interruptedInCall(false);
    expect(call.aborted).toBe(true);
    take(true);
    await interrupting;
    expect((await turn.settled).status).toBe("interrupted");
  });

  it("wait for a harness that asks for it to have taken the interrupt", async () => {
    const { session, turn, interrupting, take, call } = await interruptedInCall(true);
    expect(call.aborted).toBe(false);
    // Still not once the interrupt is durable: only the harness's word cancels them.
    await waitForEvent(session, (e) => e.type === "user.interrupt");
    expect(call.aborted).toBe(false);
    take(true);
    await interrupting;
    expect(call.aborted).toBe(true);
    expect((await turn.settled).status).toBe("interrupted");
  });

  it("are cancelled too when that harness's interrupt fails", async () => {
    const { turn, interrupting, take, call } = await interruptedInCall(true);
    take(false);
    await expect(interrupting).rejects.toThrow("the agent did not answer the interrupt");
    expect(call.aborted).toBe(true);
    expect((await turn.settled).status).toBe("interrupted");
  });

  // Codex ends its turn on the interrupt before interrupt() returns: the turn's end, not the harness's word, then
  // cancels what it left pending, and a client who interrupted must read that it was interrupted.
  it("leave a permission request, when the turn ends before that harness has taken the interrupt, as interrupted", async () => {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    const factory: HarnessFactory = {
      name: "asks",
      supportsSteering: false,
      open: async (options) =>
        quietHarness({
          cancelsToolsAfterInterrupt: true,
          async prompt(_text, ctx) {
            void options.permit(ctx.turn, { tool: "deploy" }, ctx.signal);
            await ended;
            return { interrupted: true };
          },
          interrupt: () => {
            end();
            return new Promise(() => {}); // never taken: only the turn's end cancels what it left
          },
        }),
    };
    t = makeBrain({ factories: [factory] });
    const session = await t.brain.create({ harness: "asks", permissions: { tools: { deploy: "ask" } } });
    const turn = await session.prompt("go");
    await waitForEvent(session, (e) => e.type === "permission.requested");
    session.interrupt().catch(() => {});
    expect((await turn.settled).status).toBe("interrupted");
    const resolved = (await events(session)).filter((e) => e.type === "permission.resolved");
    expect(resolved.map((e) => e.data)).toMatchObject([
      { decision: "deny", reason: "the turn was interrupted" },
    ]);
  });
});

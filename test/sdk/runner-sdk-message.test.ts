// turn.message() refuses what Brain would refuse as callTool does: a rejected promise, never a throw at the call,
// and the turn that could not send its answer fails with the reason.
import { describe, expect, it } from "vitest";
import type { Turn } from "../../sdk/ts/index.js";
import { OPEN_PARAMS, reply, runSdk } from "./harness.js";

const open = { attachment: "A", id: "open-A", method: "open", params: OPEN_PARAMS };
const prompt = (turn: string, id: string) => ({
  attachment: "A",
  turn,
  id,
  method: "prompt",
  params: { text: "hi" },
});

describe("runner SDK: turn.message() with data Brain would refuse", () => {
  it("returns a rejected promise instead of throwing, and the turn fails with the reason", async () => {
    let threw: unknown;
    let rejected: unknown;
    const sdk = runSdk({
      open: () => ({
        async prompt(text: string, turn: Turn) {
          let sent: Promise<void> | undefined;
          try {
            sent = turn.message({ text: 1 } as never);
          } catch (err) {
            threw = err;
          }
          turn.delta("after");
          // The second turn's handler does not await its message at all, as most handlers do not.
          if (text === "awaited") await sent?.catch((err: unknown) => (rejected = err));
        },
        checkpoint: () => [],
      }),
    });
    sdk.send(open);
    await sdk.next(reply("open-A"));
    sdk.send({ ...prompt("T1", "p1"), params: { text: "awaited" } });
    const first = await sdk.next(reply("p1"));
    expect(threw).toBeUndefined();
    expect(rejected).toMatchObject({ code: "brain_error", message: /invalid assistant.message data: text/ });
    expect(first.error).toMatchObject({
      code: "brain_error",
      message: /invalid assistant.message data: text/,
    });
    expect(sdk.frames.some((f) => f.event === "assistant.delta" && f.data.text === "after")).toBe(true);
    expect(sdk.frames.some((f) => f.event === "assistant.message")).toBe(false);

    sdk.send(prompt("T2", "p2"));
    expect((await sdk.next(reply("p2"))).error).toMatchObject({ code: "brain_error", message: /text/ });
  });
});

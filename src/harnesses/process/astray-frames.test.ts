// A frame a shared runner writes for an attachment it does not serve may hold any of its sessions' text: it is
// quoted only to the session whose running turn it names, never to the host's other sessions.
import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../core/session.js";
import { events, makeBrain, type TestBrain } from "../../testing/brain.js";
import { inlineRunnerArgs } from "../../testing/inline-runner.js";
import { ProcessFactory } from "./factory.js";

let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

async function warningsOf(session: Session): Promise<string[]> {
  return (await events(session))
    .filter((e) => e.type === "harness.warning")
    .map((e) => (e.data as { message: string }).message);
}

describe("a shared runner's frame for an unknown attachment", () => {
  it("is quoted to the session whose turn it names, and shown to no other session", async () => {
    const args = inlineRunnerArgs(
      "",
      `
  if (f.method === "prompt" && f.params.text === "stray") {
    send({ attachment: "A-secret-" + f.attachment, turn: f.turn, event: "assistant.delta", data: { text: "x" } });
    send({ attachment: "B-secret", turn: "no-such-turn", event: "assistant.delta", data: { text: "y" } });
  }
  reply({});`,
    );
    const factory = new ProcessFactory({
      name: "shared-inline",
      command: process.execPath,
      args,
      shared: true,
      verifyHistory: false,
    });
    t = makeBrain({ factories: [factory] });
    const a = await t.brain.create({ harness: "shared-inline" });
    const b = await t.brain.create({ harness: "shared-inline" });
    expect((await (await b.prompt("hello")).settled).status).toBe("completed");
    expect((await (await a.prompt("stray")).settled).status).toBe("completed");

    const own = (await warningsOf(a)).join("\n");
    expect(own).toMatch(/unknown attachment "A-secret-/);
    expect(own).toMatch(/an attachment this shared runner does not serve was ignored \(not quoted here/);
    expect(own).not.toContain("B-secret");
    expect(await warningsOf(b)).toEqual([]);
  });
});

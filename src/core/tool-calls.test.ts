import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain } from "../testing/brain.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

describe("a call to a tool the session does not have", () => {
  it("is refused as unbound, and no client is asked to allow it", async () => {
    t = makeBrain();
    const session = await t.brain.create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { default: "ask", ask_timeout_ms: 50 },
    });
    const turn = await session.prompt('call the tool "not_offered" with {"path":"/etc/shadow"}');
    expect((await turn.settled).status).toBe("completed");
    const all = await events(session);
    expect(all.filter((e) => e.type.startsWith("permission."))).toEqual([]);
    expect(all.find((e) => e.type === "tool.result")?.data).toMatchObject({
      is_error: true,
      content: [{ text: 'tool "not_offered" is not bound to this session; bound tools: echo' }],
    });
  });

  it("is refused as unbound where the policy denies every tool, not blamed on the policy", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo", permissions: { default: "deny" } });
    await (await session.prompt('call the tool "not_offered" with {}')).settled;
    const result = (await events(session)).find((e) => e.type === "tool.result");
    expect(result?.data).toMatchObject({
      is_error: true,
      content: [{ text: expect.stringMatching(/is not bound to this session/) }],
    });
  });
});

// Nodes of a cluster each stamp the records they make with their own clock. A fork or handoff made on a node whose
// clock is behind its parent's node must still find its parent: the parent check (isParentOf) compares the two
// records' created_at.
import { afterEach, describe, expect, it, vi } from "vitest";
import { events, makeBrain, type TestBrain } from "../testing/brain.js";
import { conversationEvents } from "./handoff.js";

let t: TestBrain;
afterEach(async () => {
  vi.useRealTimers();
  await t?.cleanup();
});

describe("a fork or handoff made where the clock is behind its parent's", () => {
  it("keeps its parent's conversation", async () => {
    t = makeBrain();
    // The parent is made by a node whose clock runs a minute ahead of this one's.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 60_000 });
    const parent = await t.brain.create({ harness: "echo" });
    await (await parent.prompt("before the fork")).settled;
    const manifest = await parent.checkpoint();
    vi.useRealTimers();
    const fork = await t.brain.fork(parent.id, manifest.id);
    const moved = await t.brain.handoff(parent.id, { to: "echo" });
    for (const child of [fork, moved]) {
      const record = await t.brain.record(child.id);
      const said = (await conversationEvents(t.store, record, await events(child)))
        .filter((e) => e.type === "user.prompt")
        .map((e) => (e.data as { text: string }).text);
      expect(said).toContain("before the fork");
    }
  });
});

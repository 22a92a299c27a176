// Which command ran under an Idempotency-Key is read from the session's log: the first keyed command of a
// session builds the index of keys without holding the log in memory.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { makeBrain, type TestBrain } from "../testing/brain.js";

let t: TestBrain;
afterEach(async () => {
  await t?.cleanup();
});

describe("the index of a session's command keys", () => {
  it("is built a page at a time: a log of large prompts bigger than the heap finds its keys", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    const big = "x".repeat(3 << 20);
    for (let i = 0; i < 40; i++) {
      await session.log.append([{ type: "user.steer", data: { text: big, idempotency_key: `k${i}` } }]);
    }
    await t.brain.close();
    // A host with a 96 MiB heap (a daemon, in small) opens the 120 MiB log and looks a key up.
    const brainJs = pathToFileURL(join(import.meta.dirname, "../../dist/src/testing/brain.js")).href;
    const script = `const { makeBrain } = await import(${JSON.stringify(brainJs)});
      const t = makeBrain({ home: ${JSON.stringify(t.home)} });
      const session = await t.brain.session(${JSON.stringify(session.id)});
      const found = await session.commandEvent("k39");
      process.stdout.write(JSON.stringify(found?.data ?? null));
      await t.brain.close();`;
    const child = spawnSync(
      process.execPath,
      ["--max-old-space-size=96", "--input-type=module", "-e", script],
      {
        encoding: "utf8",
      },
    );
    expect(child.stderr).not.toMatch(/heap out of memory/);
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ text: "", idempotency_key: "k39" });
  }, 60_000);
});

// A keyed fork across a real crash: a child process forks a session under an Idempotency-Key and is killed
// (SIGKILL) while it restores the checkpoint into the fork's native directory, after the fork's record (which
// keeps the key) is written and before its first event. The client's retry under the key must get a whole fork,
// not the half-made session, whose log is empty and whose native state lacks the checkpoint's files.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it } from "vitest";
import { bodyDigest } from "../core/command-keys.js";
import { makeBrain, type TestBrain } from "../testing/brain.js";
import { scriptChild } from "../testing/processes.js";
import { KeyedCreates, keyedSessionId, removeHalfMade } from "./keyed-creates.js";

let t: TestBrain | undefined;

afterEach(async () => {
  await t?.cleanup();
});

const dist = (module: string) =>
  JSON.stringify(pathToFileURL(path.join(import.meta.dirname, "../../dist/src", module)).href);

/** The child: the first fork, on the same home, whose restore into the fork's native dir never returns. */
function childScript(home: string, source: string, fork: string, sent: string): string {
  return `import { writeSync } from "node:fs";
    const { makeBrain } = await import(${dist("testing/brain.js")});
    const { CheckpointStore } = await import(${dist("core/checkpoints/index.js")});
    const { brain, store } = makeBrain({ home: ${JSON.stringify(home)} });
    // Alive until killed: a never-settling promise alone lets node exit on its own.
    setInterval(() => {}, 60_000);
    store.checkpoints = (id) => {
      const checkpoints = new CheckpointStore(store.paths(id).checkpoints);
      checkpoints.restore = () => {
        writeSync(1, "seeding\\n");
        return new Promise(() => {});
      };
      return checkpoints;
    };
    const made = { id: ${JSON.stringify(fork)}, idempotency: { key: "f1", sent: ${JSON.stringify(sent)} } };
    await brain.fork(${JSON.stringify(source)}, "latest", made);`;
}

it("makes the fork again on a retry under its key when the first was killed while seeding it", async () => {
  t = makeBrain();
  const source = await t.brain.create({ harness: "echo" });
  await (await source.prompt("remember KIWI")).settled;
  await source.checkpoint();
  await t.brain.closeSession(source.id);
  const request = { tenant: "default", command: "fork", source: source.id, key: "f1", body: {} } as const;
  const fork = keyedSessionId("default", "fork", source.id, "f1");
  const sent = bodyDigest(["fork", source.id, {}]);

  const child = scriptChild(childScript(t.home, source.id, fork, sent));
  try {
    await expect.poll(child.out, { timeout: 60_000 }).toContain("seeding");
    // While the first still makes it, it holds the fork's log: not half made, not removed.
    expect(await removeHalfMade(t.brain, fork)).toEqual({ held: expect.stringContaining(fork) });
  } finally {
    await child.kill();
  }
  // Killed at the point: the fork's record keeps the key; its log and native dir are empty.
  expect((await t.brain.record(fork)).idempotency).toEqual({ key: "f1", sent });
  expect(await t.brain.lastSeq(fork)).toBe(0);

  const brain = t.brain;
  const creates = new KeyedCreates(
    (id) => brain.record(id).catch(() => undefined),
    undefined,
    (id) => removeHalfMade(brain, id),
  );
  const retried = await creates.run(request, (made) => brain.fork(source.id, "latest", made));
  expect(retried).toBe(fork);
  const events = await brain.events(fork);
  expect(events[0]).toMatchObject({ type: "session.opened", data: { forked_from: { session: source.id } } });
  const native = t.store.paths(fork).native;
  expect(readdirSync(native)).toEqual(["echo.jsonl"]);
  expect(readFileSync(path.join(native, "echo.jsonl"), "utf8")).toContain("KIWI");
  expect((await brain.record(fork)).idempotency).toEqual({ key: "f1", sent });
  // Made now: a retry gets it, making nothing again.
  expect(await creates.run(request, () => Promise.reject(new Error("made again")))).toBe(fork);
});

// A keyed fork across a real crash: a child process forks a session under an Idempotency-Key and is killed
// (SIGKILL) while it restores the checkpoint into the fork's native directory, after the fork's record (which
// keeps the key) is written and before its first event. The client's retry under the key must get a whole fork,
// not the half-made session, whose log is empty and whose native state lacks the checkpoint's files.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { bodyDigest } from "../core/command-keys.js";
import { makeBrain, type TestBrain } from "../testing/brain.js";
import { heldForkScript } from "../testing/held-fork-child.js";
import { scriptChild } from "../testing/processes.js";
import { KeyedCreates, keyedSessionId, removeHalfMade } from "./keyed-creates.js";

let t: TestBrain | undefined;

afterEach(async () => {
  await t?.cleanup();
});

it("makes the fork again on a retry under its key when the first was killed while seeding it", async () => {
  t = makeBrain();
  const source = await t.brain.create({ harness: "echo" });
  await (await source.prompt("remember KIWI")).settled;
  await source.checkpoint();
  await t.brain.closeSession(source.id);
  const request = { tenant: "default", command: "fork", source: source.id, key: "f1", body: {} } as const;
  const fork = keyedSessionId("default", "fork", source.id, "f1");
  const sent = bodyDigest(["fork", source.id, {}]);

  const child = scriptChild(
    heldForkScript(t.home, source.id, { id: fork, idempotency: { key: "f1", sent } }),
  );
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

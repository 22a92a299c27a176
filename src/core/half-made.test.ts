// A fork (no Idempotency-Key) across a real crash: a child process forks a session and is killed (SIGKILL) while it
// restores the checkpoint into the fork's native directory, after the fork's record is written and before its
// first event. Nobody was told of the fork, and it holds neither the source's conversation nor a session.opened:
// the next open must not take it for a session (a prompt on it ran on empty native state, its first event a
// user.prompt), but say it was never made and remove it with what the killed restore left in its directory.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { makeBrain, type TestBrain } from "../testing/brain.js";
import { heldForkScript } from "../testing/held-fork-child.js";
import { scriptChild } from "../testing/processes.js";

let t: TestBrain | undefined;

afterEach(async () => {
  await t?.cleanup();
});

it("removes a fork whose maker was killed before its first event when it is next opened, saying it was never made", async () => {
  t = makeBrain();
  const source = await t.brain.create({ harness: "echo" });
  await (await source.prompt("remember KIWI")).settled;
  await source.checkpoint();
  await t.brain.closeSession(source.id);

  const child = scriptChild(heldForkScript(t.home, source.id));
  try {
    await expect.poll(child.out, { timeout: 60_000 }).toContain("seeding");
  } finally {
    await child.kill();
  }
  const forks = (await t.store.list()).filter((s) => s.id !== source.id);
  expect(forks).toHaveLength(1);
  const fork = forks[0]!.id;
  expect(await t.brain.lastSeq(fork)).toBe(0);

  await expect(t.brain.session(fork)).rejects.toMatchObject({
    code: "not_found",
    message: expect.stringMatching(/host stopped while making it.*never made and is now removed/),
  });
  expect(await t.store.get(fork)).toBeUndefined();
  expect(existsSync(path.dirname(t.store.paths(fork).native))).toBe(false);
  // The source is untouched.
  expect((await t.brain.events(source.id)).some((e) => e.type === "checkpoint.created")).toBe(true);
  expect(readdirSync(t.store.paths(source.id).native)).toEqual(["echo.jsonl"]);
});

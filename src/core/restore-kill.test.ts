// A keyed restore across a real crash: a child process restores a checkpoint into a directory under a key and is
// killed (SIGKILL) after the files are renamed into place and before the key is kept in the session's record. The
// client's retry under the same key must finish it, not find the directory its first attempt filled and be refused
// as not empty.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it } from "vitest";
import { makeBrain, type TestBrain, tempDir } from "../testing/brain.js";
import { scriptChild } from "../testing/processes.js";

let t: TestBrain | undefined;
let outside: string | undefined;

afterEach(async () => {
  await t?.cleanup();
  if (outside) rmSync(outside, { recursive: true, force: true });
});

/** The child: the first attempt, on the same home, with the store's update (keeping the key) never returning. */
function childScript(home: string, id: string, into: string, key: string): string {
  const module = pathToFileURL(path.join(import.meta.dirname, "../../dist/src/testing/brain.js")).href;
  return `import { writeSync } from "node:fs";
    const { makeBrain } = await import(${JSON.stringify(module)});
    const { brain, store } = makeBrain({ home: ${JSON.stringify(home)} });
    // Alive until killed: a never-settling promise alone lets node exit on its own.
    setInterval(() => {}, 60_000);
    store.update = () => {
      writeSync(1, "keeping\\n");
      return new Promise(() => {});
    };
    await brain.restore(${JSON.stringify(id)}, "latest", ${JSON.stringify(into)}, { key: ${JSON.stringify(key)}, sent: "s" });`;
}

/** Runs the child's restore under `key` and kills it as it starts keeping its key. */
async function killedWhileKeeping(home: string, id: string, into: string, key: string): Promise<void> {
  const child = scriptChild(childScript(home, id, into, key));
  try {
    await expect.poll(child.out, { timeout: 60_000 }).toContain("keeping");
  } finally {
    await child.kill();
  }
}

it("finishes a keyed restore killed between writing its files and keeping its key, when retried under the key", async () => {
  t = makeBrain();
  outside = tempDir("brain-restore-kill-");
  const session = await t.brain.create({ harness: "echo" });
  await (await session.prompt("remember KIWI")).settled;
  const checkpoint = await session.checkpoint();
  await t.brain.closeSession(session.id);
  const [into, changed] = [path.join(outside, "target"), path.join(outside, "changed")];
  await Promise.all([
    killedWhileKeeping(t.home, session.id, into, "k1"),
    killedWhileKeeping(t.home, session.id, changed, "k2"),
  ]);
  // Killed at the point: the files are in place, no key is kept.
  expect(readdirSync(into)).toEqual(["echo.jsonl"]);
  expect(readdirSync(changed)).toEqual(["echo.jsonl"]);
  expect((await t.brain.record(session.id)).restores).toBeUndefined();
  const written = readFileSync(path.join(into, "echo.jsonl"), "utf8");
  expect(written).toContain("KIWI");

  const retried = await t.brain.restore(session.id, "latest", into, { key: "k1", sent: "s" });
  expect(retried).toBe(checkpoint.id);
  expect((await t.brain.record(session.id)).restores).toEqual([
    { key: "k1", sent: "s", checkpoint: checkpoint.id },
  ]);
  expect(readdirSync(into)).toEqual(["echo.jsonl"]);
  expect(readFileSync(path.join(into, "echo.jsonl"), "utf8")).toBe(written);

  // A target written to since the kill holds more than the restore: refused, its files left as they are.
  writeFileSync(path.join(changed, "notes.txt"), "mine");
  await expect(t.brain.restore(session.id, "latest", changed, { key: "k2", sent: "s" })).rejects.toThrow(
    /is not empty/,
  );
  expect(readdirSync(changed).sort()).toEqual(["echo.jsonl", "notes.txt"]);
  // Another key, or none, is a new restore: the directory a restore filled is refused.
  await expect(t.brain.restore(session.id, "latest", into, { key: "k3", sent: "s" })).rejects.toThrow(
    /is not empty/,
  );
  await expect(t.brain.restore(session.id, "latest", into)).rejects.toThrow(/is not empty/);
});

it("settles the marks of killed keyed restores when the session is next opened, leaving a restore under way", async () => {
  t = makeBrain();
  outside = tempDir("brain-restore-marks-");
  const session = await t.brain.create({ harness: "echo" });
  await (await session.prompt("remember KIWI")).settled;
  const checkpoint = await session.checkpoint();
  await t.brain.closeSession(session.id);
  const [whole, changed, running] = ["whole", "changed", "running"].map((name) =>
    path.join(outside!, name),
  ) as [string, string, string];
  await Promise.all([
    killedWhileKeeping(t.home, session.id, whole, "k1"),
    killedWhileKeeping(t.home, session.id, changed, "k2"),
  ]);
  writeFileSync(path.join(changed, "notes.txt"), "mine");
  // A third restore still under way (its writer alive, keeping its key) while the session opens.
  const child = scriptChild(childScript(t.home, session.id, running, "k3"));
  const marks = () =>
    readdirSync(path.dirname(t!.store.paths(session.id).native)).filter((name) =>
      name.startsWith("restoring-"),
    );
  try {
    await expect.poll(child.out, { timeout: 60_000 }).toContain("keeping");
    expect(marks()).toHaveLength(3);
    await t.brain.session(session.id);
    await t.brain.closeSession(session.id);
    // The whole one's answer is kept, as its retry would have kept it; the changed one's could not be: both
    // marks gone. The one under way keeps its mark.
    expect((await t.brain.record(session.id)).restores).toEqual([
      { key: "k1", sent: "s", checkpoint: checkpoint.id },
    ]);
    expect(marks()).toHaveLength(1);
  } finally {
    await child.kill();
  }
  // Its writer killed, the next open settles it too; the targets are left as they were.
  await t.brain.session(session.id);
  await t.brain.closeSession(session.id);
  expect(marks()).toEqual([]);
  expect((await t.brain.record(session.id)).restores?.map((kept) => kept.key)).toEqual(["k1", "k3"]);
  expect(readdirSync(changed).sort()).toEqual(["echo.jsonl", "notes.txt"]);
  expect(readFileSync(path.join(whole, "echo.jsonl"), "utf8")).toContain("KIWI");
});

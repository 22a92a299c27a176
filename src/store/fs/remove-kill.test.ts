// A delete across a real crash: a child process removes a session and is killed (SIGKILL) part way through the
// removal of its directory, the record and log gone and the native files not yet. Nothing was acknowledged; the
// session must be whole or gone after it, and what the removal had left must not stay on disk for good: before,
// the native files stayed under the session's id (no record: never listed, and a retried delete found no session).
import fs from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { scriptChild } from "../../testing/processes.js";
import { FsSessionStore } from "./session-store.js";

let home: string | undefined;

afterEach(async () => {
  if (home) await fs.rm(home, { recursive: true, force: true });
});

const dist = (module: string) =>
  JSON.stringify(pathToFileURL(path.join(import.meta.dirname, "../../../dist/src", module)).href);

/** The child: removes session `id`; its directory's removal stops, never returning, once the record and log are gone. */
function childScript(home: string, id: string): string {
  return `import { writeSync } from "node:fs";
    import fsp from "node:fs/promises";
    import path from "node:path";
    const { FsSessionStore } = await import(${dist("store/fs/index.js")});
    // Alive until killed: a never-settling promise alone lets node exit on its own.
    setInterval(() => {}, 60_000);
    const rm = fsp.rm;
    fsp.rm = async (target, options) => {
      if (!options?.recursive) return rm(target, options);
      for (const name of ["session.json", "events.jsonl"]) await rm(path.join(target, name), { force: true });
      writeSync(1, "removing\\n");
      return new Promise(() => {});
    };
    await new FsSessionStore(${JSON.stringify(home)}).remove(${JSON.stringify(id)});`;
}

it("leaves a session whole or gone when its delete is killed part way, and its next start removes what is left", async () => {
  home = tempDir("brain-remove-kill-");
  const store = new FsSessionStore(home);
  const kept = await store.create({ harness: "echo", config: {} });
  const { id } = await store.create({ harness: "echo", config: {} });
  await fs.writeFile(path.join(store.paths(id).native, "big.bin"), Buffer.alloc(64 << 10));

  const child = scriptChild(childScript(home, id));
  try {
    await expect.poll(child.out, { timeout: 60_000 }).toContain("removing");
  } finally {
    await child.kill();
  }
  const after = new FsSessionStore(home);
  expect(await after.get(id)).toBeUndefined();
  await after.sweepUnacknowledged(); // as the next brain serve or brain run starts
  expect(await fs.readdir(after.root)).toEqual([kept.id]);
  expect((await after.list()).map((s) => s.id)).toEqual([kept.id]);
});

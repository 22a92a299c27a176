// Listing a CLI's native files while the CLI creates and removes its lock files beside them.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { tempDir } from "../../testing/brain.js";
import { listNativeFiles } from "./files.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("skips a file that is gone between the directory listing and its lstat, and lists the rest", async () => {
  dir = tempDir("brain-files-");
  mkdirSync(join(dir, "state"));
  writeFileSync(join(dir, "state", "session.jsonl"), "{}\n");
  const lock = join(dir, "state", "config.json.lock");
  // Each lock file lives for one turn of the loop, as a CLI's do: made, then removed before the next listing
  // looks at it. Many listings, so some fall between readdir and lstat.
  let churning = true;
  const churn = () => {
    if (!churning) return;
    writeFileSync(lock, "");
    setImmediate(() => {
      rmSync(lock, { force: true });
      setImmediate(churn);
    });
  };
  churn();
  try {
    for (let i = 0; i < 300; i++) {
      const files = await listNativeFiles(dir, "state", { appendOnly: () => true });
      expect(files.map((f) => f.path)).toContain("state/session.jsonl");
    }
  } finally {
    churning = false;
  }
});

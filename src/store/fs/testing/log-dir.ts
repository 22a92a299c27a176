// A fresh directory for each test's event log (`file`, events.jsonl inside it), removed after the test: the set-up
// the embedded store's log tests share.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach } from "vitest";

export function useLogDir(prefix: string): { readonly dir: string; readonly file: string } {
  const paths = { dir: "", file: "" };
  beforeEach(async () => {
    paths.dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
    paths.file = path.join(paths.dir, "events.jsonl");
  });
  afterEach(async () => {
    await fs.rm(paths.dir, { recursive: true, force: true });
  });
  return paths;
}

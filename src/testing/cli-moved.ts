// A session taken over under another path (a node restoring its last checkpoint into its own home): the CLI
// resumes its files under a new working directory, which some families rewrite into them. The session's next
// checkpoint still builds on the ones taken before the move, and must restore exactly what is on disk.
import { cpSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { Brain } from "../core/brain.js";
import type { NativeFile } from "../protocol/runner.js";
import { makeBrain, tempDir } from "./brain.js";
import { type CliBed, FAKE_KEY } from "./cli.js";
import type { CliFamilyCase } from "./cli-family.js";

/**
 * `reopen`: the session is also closed and reopened between the turn after the move and the checkpoint.
 * `copiedWhole`: the native dir is copied as it was, the CLI's own databases too (naming the old home), not restored.
 */
export async function checkpointsAfterHomeMoved(
  b: CliBed,
  f: CliFamilyCase,
  reopen = true,
  copiedWhole = false,
): Promise<void> {
  const session = await b.create();
  expect((await (await session.prompt("List the files here")).settled).status).toBe("completed");
  const before = await session.checkpoint();
  await b.t.brain.close();
  const home = tempDir("brain-moved-");
  const into = tempDir("brain-moved-restore-");
  const taken = tempDir("brain-moved-taken-");
  const intoNext = tempDir("brain-moved-restore-next-");
  const moved = makeBrain({
    home,
    factories: [f.factory({ launcher: b.sandbox.launcher })],
    provider: { base_url: `${b.sandbox.provider.url}${f.provider?.path ?? ""}`, api_key: FAKE_KEY },
  });
  try {
    cpSync(b.t.home, home, { recursive: true });
    // The native dir is what the checkpoint holds, no more (a CLI's own databases would still name the old home).
    const native = moved.store.paths(session.id).native;
    if (!copiedWhole) {
      rmSync(native, { recursive: true });
      await moved.brain.restore(session.id, "latest", taken);
      cpSync(taken, native, { recursive: true });
    }
    let again = await moved.brain.session(session.id);
    expect((await (await again.prompt("NOTOOL second turn")).settled).status).toBe("completed");
    if (reopen) {
      // No checkpoint since the move: the harness reopened knows of the rewrite only what it kept on disk.
      await moved.brain.closeSession(session.id);
      again = await moved.brain.session(session.id);
      const third = await (await again.prompt("NOTOOL third turn")).settled;
      expect(third.error).toBeUndefined();
      expect(third.status).toBe("completed");
    }
    const { files } = await again.checkpoint();
    expect(files.length).toBeGreaterThan(0);
    await restoresExactly(moved.brain, session.id, files, native, into);
    // The rewrite is stored whole once: the checkpoint after builds on that one, not whole again forever.
    const appended = (path: string) => before.files.some((f) => f.path === path && f.append_only);
    const whole = files.filter((file) => !file.append_only && appended(file.path));
    expect(whole.length).toBeGreaterThan(0);
    expect((await (await again.prompt("NOTOOL after the checkpoint")).settled).status).toBe("completed");
    const next = await again.checkpoint();
    for (const file of whole) {
      const after = next.files.find((f) => f.path === file.path);
      expect(after?.append_only, file.path).toBe(true);
      expect(after?.segments.slice(0, file.segments.length), file.path).toEqual(file.segments);
    }
    await restoresExactly(moved.brain, session.id, next.files, native, intoNext);
  } finally {
    await moved.cleanup();
    for (const dir of [home, into, taken, intoNext])
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

async function restoresExactly(
  brain: Brain,
  id: string,
  files: readonly NativeFile[],
  native: string,
  into: string,
): Promise<void> {
  await brain.restore(id, "latest", into);
  for (const file of files) {
    expect(readFileSync(join(into, file.path)).toString(), file.path).toBe(
      readFileSync(join(native, file.path)).toString(),
    );
  }
}

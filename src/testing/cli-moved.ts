// A session taken over under another path (a node restoring its last checkpoint into its own home): the CLI
// resumes its files under a new working directory, which some families rewrite into them. The session's next
// checkpoint still builds on the ones taken before the move, and must restore exactly what is on disk.
import { cpSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { makeBrain, tempDir } from "./brain.js";
import { type CliBed, FAKE_KEY } from "./cli.js";
import type { CliFamilyCase } from "./cli-family.js";

/** `reopen`: the session is also closed and reopened between the turn after the move and the checkpoint. */
export async function checkpointsAfterHomeMoved(b: CliBed, f: CliFamilyCase, reopen = true): Promise<void> {
  const session = await b.create();
  expect((await (await session.prompt("List the files here")).settled).status).toBe("completed");
  await session.checkpoint();
  await b.t.brain.close();
  const home = tempDir("brain-moved-");
  const into = tempDir("brain-moved-restore-");
  const taken = tempDir("brain-moved-taken-");
  const moved = makeBrain({
    home,
    factories: [f.factory({ launcher: b.sandbox.launcher })],
    provider: { base_url: `${b.sandbox.provider.url}${f.provider?.path ?? ""}`, api_key: FAKE_KEY },
  });
  try {
    cpSync(b.t.home, home, { recursive: true });
    // The native dir is what the checkpoint holds, no more (a CLI's own databases would still name the old home).
    const native = moved.store.paths(session.id).native;
    rmSync(native, { recursive: true });
    await moved.brain.restore(session.id, "latest", taken);
    cpSync(taken, native, { recursive: true });
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
    await moved.brain.restore(session.id, "latest", into);
    for (const file of files) {
      expect(readFileSync(join(into, file.path)).toString(), file.path).toBe(
        readFileSync(join(native, file.path)).toString(),
      );
    }
  } finally {
    await moved.cleanup();
    for (const dir of [home, into, taken])
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

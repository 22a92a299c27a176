// The bound on a tenant's open sessions (open-limit.ts) is released on every path an open can fail by, so a
// tenant is never held back by a session that is not open.
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { echoFactory, tempDir } from "../testing/brain.js";
import { BuiltinTools } from "../tools/builtin.js";
import { ToolRouter } from "../tools/router.js";
import { Brain } from "./brain.js";
import { BrainError } from "./errors.js";
import type { EventLog } from "./event-log.js";
import { HarnessRegistry } from "./registry.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A store whose logs of `fenced` sessions were fenced (another node took the lease) as they were opened. */
class FencingStore extends FsSessionStore {
  readonly fenced = new Set<string>();

  override async openLog(id: string) {
    const log = await super.openLog(id);
    if (!this.fenced.has(id)) return log;
    // As the cluster's log does: a listener added once the log is fenced is called at once.
    const onRevoked: EventLog["onRevoked"] = (listener) => {
      listener(new BrainError("locked", `session ${id}: another node holds its lease`));
      return () => {};
    };
    return Object.assign(log, { onRevoked });
  }
}

function brainWithLimit(max: number) {
  const home = tempDir();
  const store = new FencingStore(home);
  const brain = new Brain({
    store,
    harnesses: new HarnessRegistry([echoFactory()]),
    tools: new ToolRouter([new BuiltinTools()]),
    openSessionsPerTenant: max,
  });
  cleanups.push(async () => {
    await brain.close();
    rmSync(home, { recursive: true, force: true });
  });
  return { brain, store };
}

describe("open sessions per tenant", () => {
  it("are not held by a session whose log was fenced while it opened: the open fails, the slot is free", async () => {
    const { brain, store } = brainWithLimit(1);
    const session = await brain.create({ harness: "echo", tenant: "t" });
    await brain.closeSession(session.id);
    store.fenced.add(session.id);

    await expect(brain.session(session.id)).rejects.toMatchObject({ code: "locked" });
    expect(brain.liveSession(session.id)).toBeUndefined();
    store.fenced.clear();
    await expect(brain.create({ harness: "echo", tenant: "t" })).resolves.toBeDefined();
  });
});

// Which sessions cannot move to another cluster node, and what a node does with one pinned elsewhere.
import { describe, expect, it } from "vitest";
import { ProcessFactory } from "../harnesses/process/factory.js";
import type { SessionRecord } from "../protocol/session.js";
import { BrainError } from "./errors.js";
import { pinIfUnmovable, pinnedReason, refusePinnedElsewhere } from "./pinning.js";
import type { SessionStore } from "./store.js";

const runner = (movable?: boolean) =>
  new ProcessFactory({
    name: "r",
    command: process.execPath,
    args: [],
    ...(movable === undefined ? {} : { movable }),
  });

const record = (extra: Partial<SessionRecord> = {}): SessionRecord => ({
  id: "s1",
  harness: "r",
  config: {},
  created_at: "2026-01-01T00:00:00.000Z",
  status: "open",
  ...extra,
});

function store(node: string | undefined): SessionStore & { patches: unknown[] } {
  const patches: unknown[] = [];
  return {
    patches,
    ...(node ? { node } : {}),
    update: async (_id: string, patch: unknown) => {
      patches.push(patch);
      return record();
    },
  } as unknown as SessionStore & { patches: unknown[] };
}

describe("pinning", () => {
  it("pins a session working in a local directory, or on a runner configured movable: false", () => {
    expect(pinnedReason(runner(), { options: { cwd: "/srv/repo" } })).toContain('options.cwd "/srv/repo"');
    expect(pinnedReason(runner(), { options: { working_dir: "/w" } })).toContain("options.working_dir");
    expect(pinnedReason(runner(false), {})).toContain("movable: false");
    expect(pinnedReason(runner(), { options: { delay_ms: 5 } })).toBeUndefined();
    expect(pinnedReason(runner(true), {})).toBeUndefined();
  });

  it("records the first node in cluster mode only, and refuses the session on another node with code pinned", async () => {
    const single = store(undefined);
    await pinIfUnmovable(single, runner(false), record());
    expect(single.patches).toEqual([]);
    const a = store("a");
    await pinIfUnmovable(a, runner(false), record());
    expect(a.patches).toEqual([{ pinned: { node: "a", reason: expect.stringContaining("movable") } }]);
    const pinned = record({ pinned: { node: "a", reason: "its runner keeps state elsewhere" } });
    expect(() => refusePinnedElsewhere(store("a"), pinned)).not.toThrow();
    expect(() => refusePinnedElsewhere(store(undefined), pinned)).not.toThrow();
    let refused: unknown;
    try {
      refusePinnedElsewhere(store("b"), pinned);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(BrainError);
    expect(refused).toMatchObject({ code: "pinned", message: expect.stringContaining("only on node a") });
  });
});

// What the daemon does to a session's native files between turns, besides checkpoints: rewrites them from the log
// (rebuild). It records no key where a retry on another node or after a restart could find it: a retry under one
// gets the first answer from this node's memory (./keyed-answers.ts), where it would rebuild again.
import { basename } from "node:path";
import type { Brain } from "../core/brain.js";
import type { RebuildView } from "../protocol/api.js";
import type { ControlLeases } from "./control.js";
import type { KeyedAnswers } from "./keyed-answers.js";
import type { Caller } from "./sessions.js";

export interface NativeStateParts {
  brain: Brain;
  leases: ControlLeases;
  answers: KeyedAnswers;
}

/**
 * Rewrites session `id`'s native state from its log (the same seeding as a handoff to its own family), once per
 * key: a retry sets no second folder aside and restarts the harness no second time. The caller, already found to
 * own the session, drives it: its harness is closed and reopened.
 */
export function rebuild(
  parts: NativeStateParts,
  caller: Caller,
  id: string,
  key?: string,
): Promise<RebuildView> {
  return parts.answers.once({ tenant: caller.tenant, session: id, route: "rebuild", key }, "", async () => {
    parts.leases.drive(id, caller.client);
    const { seeded, aside } = await parts.brain.rebuild(id);
    // A path inside the session's own directory: the caller learns its name, not the daemon's file system.
    return { id, seeded, aside: basename(aside) };
  });
}

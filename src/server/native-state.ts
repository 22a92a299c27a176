// What the daemon does to a session's native files between turns, besides checkpoints: rewrites them from the log
// (rebuild) and writes a checkpoint's into a directory of this machine (restore). Neither records its key where a
// retry on another node or after a restart could find it: a retry under one gets the first answer from this node's
// memory (./keyed-answers.ts), where it would rebuild again or be refused the directory the first filled.
import { basename } from "node:path";
import type { Brain } from "../core/brain.js";
import { bodyDigest } from "../core/command-keys.js";
import type { RebuildView } from "../protocol/api.js";
import { DEFAULT_TENANT } from "./auth/tokens.js";
import type { ControlLeases } from "./control.js";
import { ApiError, inField } from "./errors.js";
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

/**
 * Writes a checkpoint's native files into a directory on this machine (the default tenant only), once per key and
 * body: its id. The caller is already found to own the session.
 */
export async function restore(
  parts: NativeStateParts,
  caller: Caller,
  id: string,
  { into, checkpoint = "latest" }: { into: string; checkpoint?: string | undefined },
  key?: string,
): Promise<string> {
  if (caller.tenant !== DEFAULT_TENANT) {
    throw new ApiError(
      "forbidden",
      "restoring into a directory of the daemon's machine needs a token of the default tenant; fork the session instead",
    );
  }
  const slot = { tenant: caller.tenant, session: id, route: "restore", key };
  return parts.answers.once(slot, bodyDigest({ into, checkpoint }), () =>
    parts.brain.restore(id, checkpoint, into).catch((err) => Promise.reject(inField(err, "checkpoint"))),
  );
}

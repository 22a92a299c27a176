// What the daemon does to a session's native files between turns, besides checkpoints: rewrites them from the log
// (rebuild) and writes a checkpoint's into a directory of this machine (restore). A rebuild's key is in the
// session.recovered it appends, where a retry on another node or after a restart finds it (./idempotency.ts); a
// restore writes nothing to the log, and its key and answer go into the session's record (src/core/restores.ts),
// where its retry finds them, on any node and after a restart, instead of the directory the first filled (refused).
import { basename } from "node:path";
import type { z } from "zod";
import type { Brain } from "../core/brain.js";
import { bodyDigest } from "../core/command-keys.js";
import { restoredUnder } from "../core/restores.js";
import type { RebuildView } from "../protocol/api.js";
import type { EventData } from "../protocol/events.js";
import { DEFAULT_TENANT } from "./auth/tokens.js";
import type { ControlLeases } from "./control.js";
import { ApiError, inField } from "./errors.js";
import { type IdempotentCommands, keyedAs } from "./idempotency.js";
import { anotherBody, type KeyedAnswers } from "./keyed-answers.js";
import type { Caller } from "./sessions.js";

export interface NativeStateParts {
  brain: Brain;
  leases: ControlLeases;
  answers: KeyedAnswers;
  commands: IdempotentCommands;
}

type Recovered = z.infer<(typeof EventData)["session.recovered"]>;

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
  // This node's memory still shares one run between a retry and the first while that runs (the log has no event
  // yet); once it is done, the log answers, here or on another node, after a restart too.
  return parts.answers.once({ tenant: caller.tenant, session: id, route: "rebuild", key }, "", async () => {
    const session = await parts.brain.session(id);
    return parts.commands.run(
      session,
      key,
      keyedAs("session.recovered"),
      () =>
        parts.leases.driving(id, caller.client, async () => {
          const { seeded, aside } = await parts.brain.rebuild(id, key);
          // A path inside the session's own directory: the caller learns its name, not the daemon's file system.
          return { id, seeded, aside: basename(aside) };
        }),
      (earlier) => {
        const { rebuilt } = earlier.data as Recovered;
        if (rebuilt) return { id, ...rebuilt };
        // Keyed session.recovered events are a rebuild's, which always records what it did.
        throw new ApiError(
          "brain_error",
          `session ${id}'s rebuild under this key (seq ${earlier.seq}) recorded no result`,
        );
      },
    );
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
  const sent = bodyDigest({ into, checkpoint });
  // This node's memory shares one run between a retry and the first while that runs; once it is done, the
  // session's record answers, here or on another node, after a restart too.
  return parts.answers.once(slot, sent, async () => {
    const earlier = key === undefined ? undefined : restoredUnder(await parts.brain.record(id), key);
    if (earlier && earlier.sent !== sent) throw anotherBody(slot);
    if (earlier) return earlier.checkpoint;
    const keyed = key === undefined ? undefined : { key, sent };
    return parts.brain
      .restore(id, checkpoint, into, keyed)
      .catch((err) => Promise.reject(inField(err, "checkpoint")));
  });
}

// Cluster mode: a session is taken over by another node from its checkpoints, which works only when the
// harness keeps all its state in its native dir. One that works in a local directory (options `cwd` or
// `working_dir`), or whose factory says its state lives elsewhere, is pinned to the node that first runs it:
// its record says so (GET /v1/sessions/{id} shows `pinned`), and another node refuses to open it with code
// `pinned` instead of starting it afresh without its state.
import type { SessionConfig } from "../protocol/runner.js";
import type { SessionRecord } from "../protocol/session.js";
import { BrainError } from "./errors.js";
import type { HarnessFactory } from "./harness.js";
import type { SessionStore } from "./store.js";

const LOCAL_PATH_OPTIONS = ["cwd", "working_dir"];

/** Why a session of this harness and config cannot move to another machine, or undefined. */
export function pinnedReason(factory: HarnessFactory, config: SessionConfig): string | undefined {
  const options = (config.options ?? {}) as Record<string, unknown>;
  for (const name of LOCAL_PATH_OPTIONS) {
    const value = options[name];
    if (typeof value === "string" && value !== "") {
      return `its harness works in options.${name} "${value}", a directory of one machine that no checkpoint carries`;
    }
  }
  return factory.pinned?.(config);
}

/** Refuses (code `pinned`) to open a session pinned to another node: it would start without its state. */
export function refusePinnedElsewhere(store: SessionStore, record: SessionRecord): void {
  const pin = record.pinned;
  if (!store.node || !pin || pin.node === store.node) return;
  throw new BrainError(
    "pinned",
    `session ${record.id} cannot move to node ${store.node}: ${pin.reason}. It runs only on node ${pin.node}; send its commands while node ${pin.node} is up (or fork it from a checkpoint to continue elsewhere)`,
  );
}

/** Records, the first time a pinnable session opens in cluster mode, the node it is pinned to. */
export async function pinIfUnmovable(
  store: SessionStore,
  factory: HarnessFactory,
  record: SessionRecord,
): Promise<void> {
  if (!store.node || record.pinned) return;
  const reason = pinnedReason(factory, record.config);
  if (reason) await store.update(record.id, { pinned: { node: store.node, reason } });
}

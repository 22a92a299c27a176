// The marks of keyed restores (./restores.ts): what a keyed restore notes in the session's directory on this
// machine before it writes anything, so that its retry can finish it if it is killed before its record keeps the
// answer; and their settling when the session is next opened, so that a mark whose retry never came does not stay
// for the session's life.
import { createHash } from "node:crypto";
import { readdir, readFile, rm } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import type { SessionRecord } from "../protocol/session.js";
import { type Checkpoints, holdsManifest } from "./checkpoints/index.js";
import { writeFileDurable } from "./checkpoints/io.js";
import { processAlive, processStart } from "./process-identity.js";
import type { SessionStore } from "./store.js";

/**
 * The keyed restores a record keeps, the newest: a client retries within minutes of a lost answer, and a record
 * (read whole by every view and list) must not grow with every restore ever made.
 */
export const RESTORES_KEPT = 32;

/** A keyed restore's answer as its record keeps it: the key, a digest of the body, the checkpoint it wrote. */
export type KeptRestore = NonNullable<SessionRecord["restores"]>[number];

/**
 * What a keyed restore notes before it writes anything, in the session's directory on this machine (where its
 * target is): the target alone cannot say whose files it holds (only the checkpoint's), and the record is read by
 * every node (an older one refuses a restore entry with a field it does not know). Removed once the record keeps
 * the answer; one left behind names a restore killed before that. `key` and the writer (`pid`, `start`, `host`)
 * let an open settle it (settleRestoreMarks); marks written before they were noted lack them.
 */
export interface RestoreMark {
  sent: string;
  checkpoint: string;
  into: string;
  key?: string;
  pid?: number;
  start?: string;
  host?: string;
}

const MARK = /^restoring-[A-Za-z0-9_-]+\.json$/;
const markName = (key: string) => `restoring-${createHash("sha256").update(key).digest("base64url")}.json`;

export const markPath = (store: Pick<SessionStore, "paths">, id: string, key: string) =>
  path.join(path.dirname(store.paths(id).native), markName(key));

/** Notes the restore `marked` of this process at `mark`, durably, before it writes anything. */
export async function writeMark(mark: string, marked: Omit<RestoreMark, "pid" | "start" | "host">) {
  const start = processStart(process.pid);
  const writer = { pid: process.pid, ...(start ? { start } : {}), host: hostname() };
  await writeFileDurable(mark, `${JSON.stringify({ ...marked, ...writer })}\n`);
}

async function readMark(mark: string): Promise<Partial<RestoreMark> | undefined> {
  const text = await readFile(mark, "utf8").catch(() => undefined);
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined; // not a mark of this code's: nothing to recognise
  }
}

/**
 * The checkpoint a first attempt under the key wrote into `into` when it was killed before keeping its answer:
 * its mark is there, for the same body, and the target holds that checkpoint's files exactly (a restore renames
 * them into place at once). Anything else in the target (written since, or before) leaves it refused as not empty.
 */
export async function restoredBefore(
  checkpoints: Checkpoints,
  mark: string,
  { sent, into }: Pick<RestoreMark, "sent" | "into">,
): Promise<string | undefined> {
  const marked = await readMark(mark);
  if (marked?.sent !== sent || marked.into !== into || typeof marked.checkpoint !== "string")
    return undefined;
  const manifest = await checkpoints.get(marked.checkpoint).catch(() => undefined);
  return manifest && (await holdsManifest(manifest, into)) ? manifest.id : undefined;
}

/** Adds `restore` to the record's list, built on the list as the update finds it: restores at once all land. */
export async function keepRestore(store: SessionStore, id: string, restore: KeptRestore): Promise<void> {
  await store.update(id, (current) => {
    const kept = (current.restores ?? []).filter((earlier) => earlier.key !== restore.key);
    return { restores: [...kept, restore].slice(-RESTORES_KEPT) };
  });
}

/**
 * Settles the marks left in session `record`'s directory, as its retry would, when the session is opened. A mark
 * whose key the record keeps names a restore that finished (killed between keeping its answer and removing its
 * mark): removed. A mark whose writer, on this machine, is gone names a restore that will not finish on its own:
 * if its target still holds exactly its checkpoint, its answer is kept in the record, so a retry under its key,
 * on any node, gets it from there; else a retry could not take it from the mark either (it would be refused as
 * not empty, or restore anew). Either way the mark goes. A mark whose writer runs (a restore under way), is on
 * another machine (a home shared between hosts), or is not named (a mark older than this code) is left.
 */
export async function settleRestoreMarks(
  store: SessionStore,
  checkpoints: Checkpoints,
  record: SessionRecord,
): Promise<void> {
  const dir = path.dirname(store.paths(record.id).native);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => MARK.test(name));
  for (const name of names) {
    const mark = path.join(dir, name);
    if (record.restores?.some((kept) => markName(kept.key) === name)) {
      await rm(mark, { force: true });
      continue;
    }
    const marked = await readMark(mark);
    const { key, sent, into, pid } = marked ?? {};
    if (key === undefined || sent === undefined || into === undefined || pid === undefined) continue;
    if (marked?.host !== hostname() || processAlive(pid, marked.start)) continue;
    const checkpoint = await restoredBefore(checkpoints, mark, { sent, into });
    if (checkpoint !== undefined) await keepRestore(store, record.id, { key, sent, checkpoint });
    await rm(mark, { force: true });
  }
}

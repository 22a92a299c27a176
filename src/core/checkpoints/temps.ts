// Temporary files and directories of checkpoints (a blob or manifest being written, a blob being pulled, a restore
// being staged) are named for the process writing them. A process killed mid-write leaves them behind, where
// nothing would ever look again: the next writer in that directory removes those whose process is gone, and
// never a live process's (this one's or another's), whatever it is writing.
import { createHash, randomUUID } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { processAlive, processStart } from "../process-identity.js";

/** A pid is reused once its process is gone: the start time's hash tells the writer apart from a later one. */
function startHash(start: string | undefined): string {
  return createHash("sha256")
    .update(start ?? "")
    .digest("hex")
    .slice(0, 8);
}

/** `<kind>-<pid>-<start hash>-<uuid>`: unique, and naming this process as its writer. */
export function tempName(kind: "tmp" | "restoring"): string {
  return `${kind}-${process.pid}-${startHash(processStart(process.pid))}-${randomUUID()}`;
}

const TEMP = /(?:^|\.)(?:tmp|restoring)-(\d+)-([0-9a-f]{8})-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/;

/** Whether the process that named a temp `name` (by tempName) is gone; false for any other name. */
export function leftByDeadProcess(name: string): boolean {
  const found = TEMP.exec(name);
  if (!found) return false;
  const pid = Number(found[1]);
  if (!processAlive(pid, undefined)) return true;
  // A start time that cannot be read now is no proof the writer is gone.
  const start = processStart(pid);
  return start !== undefined && startHash(start) !== found[2];
}

/**
 * Removes the temps in `dir` (with `prefix`, when given) whose writer is gone. Best effort: a temp that cannot be
 * removed now is looked at again by the next writer, and never fails the write that looked.
 */
export async function removeDeadTemps(dir: string, prefix = ""): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of deadTemps(names, prefix)) {
    await rm(path.join(dir, name), { recursive: true, force: true }).catch(() => {});
  }
}

/** removeDeadTemps, for a writer that is itself synchronous (an exec shim's env file). */
export function removeDeadTempsSync(dir: string, prefix = ""): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of deadTemps(names, prefix)) {
    try {
      rmSync(path.join(dir, name), { recursive: true, force: true });
    } catch {
      // Looked at again by the next writer.
    }
  }
}

const deadTemps = (names: string[], prefix: string) =>
  names.filter((name) => name.startsWith(prefix) && leftByDeadProcess(name));

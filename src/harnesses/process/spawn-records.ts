// What Brain started, on disk: one small file per process group (a runner's, a CLI's, an extension host's),
// under `<home>/run/spawned/`. The spawn host stops the groups when Brain dies alone (spawn-host.ts); when both
// die together (a kill of Brain's whole process group, the OOM killer) nothing is left running that knows them,
// so the next Brain on the same home reads these files at its start and stops the groups whose owner is gone.
//
// A pid is reused once its process is gone, so a record holds the group leader's start time and its owner's
// (process-identity.ts). A group whose leader has exited is still stopped while any of it runs: Linux gives out
// no pid that is still some group's id, so while the recorded group lives on, its id names nothing else. What
// is left: the recorded group ends, its id goes to a new process that leads a group of its own, and that one
// exits leaving members behind - all before the next start. That group would be stopped.
import { readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ownerRecordNames, thisOwner, writeOwnerRecord } from "../../core/owner-records.js";
import { processAlive, processGroup, processStart } from "../../core/process-identity.js";

/** How long an orphaned group has to stop after SIGTERM before SIGKILL. */
const GRACE_MS = 3000;
/** A record younger than this that does not parse may be one another Brain is writing now: left for later. */
const WRITING_MS = 5000;

interface SpawnRecord {
  /** The group's id: its leader's pid. */
  pgid: number;
  /** The leader's identity (processStart), when it could be read. */
  start?: string;
  owner: { pid: number; start?: string };
}

export function spawnRecordsDir(home: string): string {
  return join(home, "run", "spawned");
}

/** Brain's side: a file per group it starts, removed when the group's leader exits. */
export class SpawnRecords {
  private readonly owner = thisOwner();

  constructor(private readonly dir: string) {}

  /**
   * Records group `pgid`. A record is a safety net: a start never fails for want of one (a full disk, a home
   * that cannot be written), it is only not stopped after a crash then.
   */
  add(pgid: number): void {
    if (process.platform !== "linux") return;
    const record: SpawnRecord = { pgid, start: processStart(pgid), owner: this.owner };
    try {
      writeOwnerRecord(this.dir, `${pgid}.json`, record);
    } catch {
      // See above: the start goes on.
    }
  }

  /** Called as the group's leader exits: a record that cannot be removed (as one that could not be written) is left. */
  remove(pgid: number): void {
    try {
      rmSync(this.file(pgid), { force: true });
    } catch {
      // Thrown from the child's exit handler it would end Brain, and every session with it.
    }
  }

  private file(pgid: number): string {
    return join(this.dir, `${pgid}.json`);
  }
}

export interface OrphanSweep {
  /** Groups signalled: their owner was gone and some of them still ran. */
  stopped: number;
  /** Records removed unread: not a record of ours (bad JSON, a wrong shape). */
  malformed: string[];
  /** Resolves once every stopped group is gone or was sent SIGKILL. */
  done: Promise<void>;
}

/**
 * At a Brain's start: stops the groups recorded in `dir` whose owning Brain is no longer alive (SIGTERM, SIGKILL
 * after `graceMs` for what is left) and removes their records; records of a live owner (another Brain on this
 * home) are left alone. Synchronous but for the grace, which `done` waits for.
 */
export function stopOrphanedGroups(dir: string, graceMs = GRACE_MS): OrphanSweep {
  const sweep: OrphanSweep = { stopped: 0, malformed: [], done: Promise.resolve() };
  if (process.platform !== "linux") return sweep;
  const names = ownerRecordNames(dir);
  const signalled: { pgid: number; file: string }[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const record = readRecord(file);
    if (!record) {
      if (!beingWritten(file)) {
        sweep.malformed.push(name);
        rmSync(file, { force: true });
      }
      continue;
    }
    if (processAlive(record.owner.pid, record.owner.start)) continue;
    if (orphanRuns(record)) {
      signalGroup(record.pgid, "SIGTERM");
      signalled.push({ pgid: record.pgid, file });
    } else rmSync(file, { force: true });
  }
  sweep.stopped = signalled.length;
  if (signalled.length > 0) {
    sweep.done = new Promise((resolve) => {
      setTimeout(() => {
        for (const { pgid, file } of signalled) {
          signalGroup(pgid, "SIGKILL");
          rmSync(file, { force: true });
        }
        resolve();
      }, graceMs).unref();
    });
  }
  return sweep;
}

/** Whether anything of the recorded group still runs, and is the recorded group's (see the header). */
function orphanRuns(record: SpawnRecord): boolean {
  if (record.pgid === process.pid || record.pgid === processGroup(process.pid)) return false; // never our own
  if (processAlive(record.pgid, record.start)) return true; // the leader itself
  // A process at the leader's pid that is not the leader: the pid was reused after the whole group was gone.
  if (processAlive(record.pgid, undefined)) return false;
  try {
    process.kill(-record.pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Signals process group `pgid`; nothing when it is gone. */
export function signalGroup(pgid: number, name: NodeJS.Signals): void {
  try {
    process.kill(-pgid, name);
  } catch {
    // gone meanwhile
  }
}

function beingWritten(file: string): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs < WRITING_MS;
  } catch {
    return false;
  }
}

function readRecord(file: string): SpawnRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(file, "utf8")) as Partial<SpawnRecord>;
    const positive = (n: unknown): n is number => Number.isInteger(n) && (n as number) > 1;
    if (!positive(r.pgid) || !r.owner || !positive(r.owner.pid)) return undefined;
    return r as SpawnRecord;
  } catch {
    return undefined;
  }
}

// What a Brain that dies (kill -9, a crash, the OOM killer) leaves of its sessions' containers. A session that is
// reopened removes its own leftovers by label (container.ts), but one never reopened, or deleted, kept its
// container running for good, with the session's directories mounted. So each container Brain starts is recorded
// in `<home>/run/containers/<id>.json` (the docker program and the owning Brain's pid and start, as the spawn
// records of ../process/spawn-records.ts), the record removed with the container, and a Brain's start removes
// the containers of records whose owner is gone. Records of a live owner (another Brain on this home) stay.
// A container's id is known only once `docker run` (or `devcontainer up`) returns: before it starts, its run is
// recorded as `run-<nonce>.json` and the container labelled `brain.run=<nonce>`, so that one killed during the
// run is found by its label.
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ownerRecordNames, thisOwner, writeOwnerRecord } from "../../core/owner-records.js";
import { processAlive } from "../../core/process-identity.js";

/** A container id as Docker prints it (or a test's fake): a file name, and never taken for a flag. */
const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const REMOVE_MS = 30_000;
/** The label of the one container a run starts: the nonce of its run record. */
export const RUN_LABEL = "brain.run";
const RUN_RECORD = /^run-([0-9a-f-]{36})\.json$/;

interface ContainerRecord {
  docker: string;
  owner: { pid: number; start?: string };
}

/** A container about to start, its id not known yet. */
export interface PendingRun {
  /** Its `brain.run` label's value. */
  run: string;
  /** The run has returned: its container is recorded by id now, or known to be removed. */
  settled(): void;
}

export function containerRecordsDir(home: string): string {
  return join(home, "run", "containers");
}

/** Brain's side: a file per container it starts, removed when the container is. */
export class ContainerRecords {
  private readonly owner = thisOwner();
  private readonly dir: string;

  /** `home`: Brain's; its containers carry it as a label too (container.ts). */
  constructor(readonly home: string) {
    this.dir = containerRecordsDir(home);
  }

  /** A safety net: a container starts whether or not its record could be written (a full disk). */
  add(docker: string, id: string): void {
    if (!CONTAINER_ID.test(id)) return;
    const record: ContainerRecord = { docker, owner: this.owner };
    try {
      writeOwnerRecord(this.dir, `${id}.json`, record);
    } catch {
      // See above.
    }
  }

  /** Before a run: recorded (as `add` is, a safety net) until `settled`. */
  starting(docker: string): PendingRun {
    const run = randomUUID();
    const name = `run-${run}.json`;
    try {
      writeOwnerRecord(this.dir, name, { docker, owner: this.owner });
    } catch {
      // As in add.
    }
    return { run, settled: () => rmSync(join(this.dir, name), { force: true }) };
  }

  remove(id: string): void {
    if (CONTAINER_ID.test(id)) rmSync(join(this.dir, `${id}.json`), { force: true });
  }
}

/**
 * At a Brain's start: `docker rm -f` of every recorded container whose owner is gone, in the background
 * (`done`), each record removed once its container is. `found`: how many there were.
 */
export function removeOrphanedContainers(dir: string): { found: number; done: Promise<void> } {
  const names = ownerRecordNames(dir);
  const orphans: { id: string; file: string; docker: string; run?: string }[] = [];
  for (const name of names) {
    const id = name.slice(0, -".json".length);
    const file = join(dir, name);
    const record = readRecord(file);
    // Unreadable: maybe one another Brain is writing now; left alone.
    if (!record || processAlive(record.owner.pid, record.owner.start)) continue;
    const run = RUN_RECORD.exec(name)?.[1];
    if (run || CONTAINER_ID.test(id))
      orphans.push({ id, file, docker: record.docker, ...(run ? { run } : {}) });
    else rmSync(file, { force: true });
  }
  if (orphans.length === 0) return { found: 0, done: Promise.resolve() };
  // Loaded only when there is something to remove: every Brain start comes through here.
  const done = import("./docker-cli.js")
    .then(({ DockerCli }) =>
      Promise.all(
        orphans.map(async ({ id, file, docker, run }) => {
          const cli = new DockerCli(docker);
          // A run's container, if it started at all, is the one with its label.
          const ids = run
            ? (
                await cli.run(["ps", "-aq", "--no-trunc", "--filter", `label=${RUN_LABEL}=${run}`], REMOVE_MS)
              ).stdout
                .split("\n")
                .map((line) => line.trim())
                .filter((line) => CONTAINER_ID.test(line))
            : [id];
          // Gone already (removed by hand, an engine reset) is as good as removed; an engine that did not answer
          // (stopped, hung) keeps the record, for the next start.
          const { goneAlready } = await import("./container.js");
          if (ids.length) {
            const removed = await cli
              .run(["rm", "-f", "-v", ...ids], REMOVE_MS)
              .then(() => true, goneAlready);
            if (!removed) return;
          }
          rmSync(file, { force: true });
        }),
      ).then(() => {}),
    )
    .catch(() => {}); // a start never fails for want of this safety net
  return { found: orphans.length, done };
}

function readRecord(file: string): ContainerRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(file, "utf8")) as Partial<ContainerRecord>;
    if (typeof r.docker !== "string" || !r.owner || !Number.isInteger(r.owner.pid) || r.owner.pid <= 1)
      return undefined;
    return r as ContainerRecord;
  } catch {
    return undefined;
  }
}

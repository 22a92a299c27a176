// What every fault-matrix cell checks after its fault, and what it reports to the table (test/faults/reporter.ts):
// the log on disk is whole (ascending seqs, every line JSON, every turn settled), every event Brain acknowledged
// (handed to subscribers) is in it, and no configured secret appears in anything Brain wrote. Seqs may have gaps:
// a batch the disk refused keeps its seqs (jsonl-log.ts, burnedSeq), so a hole is not a lost event by itself;
// loss is what was acknowledged and is not there.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Session } from "../../src/core/session.js";
import type { SessionEvent } from "../../src/protocol/events.js";
import { decodeLogText } from "../../src/store/fs/log-format.js";

declare module "vitest" {
  interface TaskMeta {
    /** Acknowledged events missing from the log after the fault, or changed. */
    eventsLost?: number;
    /** Occurrences of configured secrets in files and output Brain wrote. */
    secretsFound?: number;
  }
}

/** A test's task, as vitest hands it to the test function. */
export interface Cell {
  task: { meta: { eventsLost?: number; secretsFound?: number } };
}

export interface LogAudit {
  /** Acknowledged events not in the file, or not as acknowledged. */
  eventsLost: number;
  /** Lines that are not JSON, or seqs that repeat. */
  corrupt: string[];
  /** Turns with a turn.started and no turn.settled. */
  openTurns: string[];
  /** Turns settled more than once. */
  settledTwice: string[];
  events: SessionEvent[];
}

/** Everything a session's subscribers were handed: what Brain acknowledged as durable. */
export function acknowledged(session: Session): { seen: SessionEvent[]; stop(): void } {
  const seen: SessionEvent[] = [];
  const stop = session.log.subscribe((batch) => seen.push(...batch));
  return { seen, stop };
}

/**
 * Reads the log straight from disk (no Brain involved): its sealed segments (`events.<first seq>.jsonl`, oldest
 * first) and then `file`, the one being written; checks it against what was acknowledged.
 */
export function auditLog(file: string, acked: SessionEvent[] = []): LogAudit {
  const corrupt: string[] = [];
  const events: SessionEvent[] = [];
  for (const part of [...sealedSegments(file), file]) {
    let text = "";
    try {
      text = readFileSync(part, "utf8");
    } catch (err) {
      corrupt.push(`cannot read ${part}: ${(err as Error).message}`);
    }
    const decoded = decodeLogText(text);
    events.push(...decoded.events);
    corrupt.push(...decoded.bad);
  }
  const bySeq = new Map<number, SessionEvent>();
  for (const event of events) {
    if (bySeq.has(event.seq)) corrupt.push(`seq ${event.seq} repeats`);
    bySeq.set(event.seq, event);
  }
  let eventsLost = 0;
  for (const event of acked) {
    const kept = bySeq.get(event.seq);
    if (!kept || kept.type !== event.type || JSON.stringify(kept.data) !== JSON.stringify(event.data))
      eventsLost++;
  }
  const started = new Set<string>();
  const settled = new Map<string, number>();
  for (const event of events) {
    if (!event.turn) continue;
    if (event.type === "turn.started") started.add(event.turn);
    if (event.type === "turn.settled") settled.set(event.turn, (settled.get(event.turn) ?? 0) + 1);
  }
  return {
    eventsLost,
    corrupt,
    openTurns: [...started].filter((turn) => !settled.has(turn)),
    settledTwice: [...settled].filter(([, n]) => n > 1).map(([turn]) => turn),
    events,
  };
}

/** The sealed segments beside a session's `events.jsonl`, oldest first (their names carry their first seq). */
function sealedSegments(file: string): string[] {
  const dir = dirname(file);
  const names = existsSync(dir) ? readdirSync(dir) : [];
  return names
    .filter((name) => /^events\.\d{16}\.jsonl$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/** Every regular file under `dir`, recursively (symlinks not followed). */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const path = join(dir, name);
    const info = statSync(path, { throwIfNoEntry: false });
    if (info?.isDirectory()) out.push(...filesUnder(path));
    else if (info?.isFile()) out.push(path);
  }
  return out;
}

/** Where each secret occurs: in the files under `dirs` and in the extra texts (daemon stdout, stderr). */
export function findSecrets(secrets: string[], dirs: string[], texts: Record<string, string> = {}): string[] {
  const hits: string[] = [];
  const look = (where: string, body: string) => {
    for (const secret of secrets) if (secret && body.includes(secret)) hits.push(`${where}: ${secret}`);
  };
  for (const dir of dirs) for (const file of filesUnder(dir)) look(file, readFileSync(file, "latin1"));
  for (const [where, body] of Object.entries(texts)) look(where, body);
  return hits;
}

/** Records the cell's numbers for the table. Call before asserting, so a failing cell still reports them. */
export function note(cell: Cell, numbers: { eventsLost?: number; secretsFound?: number }): void {
  Object.assign(cell.task.meta, numbers);
}

/** The log audit every cell asserts: nothing lost, nothing corrupt, no turn open or settled twice. */
export function expectWhole(audit: LogAudit): string[] {
  const problems: string[] = [...audit.corrupt];
  if (audit.eventsLost) problems.push(`${audit.eventsLost} acknowledged events lost`);
  if (audit.openTurns.length) problems.push(`turns left open: ${audit.openTurns.join(", ")}`);
  if (audit.settledTwice.length) problems.push(`turns settled twice: ${audit.settledTwice.join(", ")}`);
  return problems;
}

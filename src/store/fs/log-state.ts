// What reopening a session needs from its log — the requests still waiting for an answer and the turns started
// but never settled — kept in step with every durable batch, and saved beside the log (events.jsonl.state) so an
// open reads the state and the log's last few KB instead of the whole file. The file is a hint, never trusted
// blindly: it names the bytes it covers (from an anchor line to the end of a line) with their hash and last
// seq; when the log there says otherwise (a crash between a write and the state's update, a torn tail cut, a
// file rewritten by compaction) the state is rebuilt from the whole log.
import { createHash } from "node:crypto";
import fsp from "node:fs/promises";
import nodePath from "node:path";
import { leftByDeadProcess } from "../../core/checkpoints/temps.js";
import { REQUEST_KINDS } from "../../core/pending.js";
import type { SessionEvent } from "../../protocol/events.js";
import { type LogIO, readFully } from "./log-io.js";

/** Open requests (their request events, in log order) and open turns (in the order they started). */
export interface OpenState {
  requests: SessionEvent[];
  openTurns: string[];
}

/** An open request's event, and when it was opened: snapshot() lists them in log order across kinds. */
interface Open {
  event: SessionEvent;
  order: number;
}

/**
 * Each event type that opens or answers a request, and the open requests of its kind by id. One map per kind: a
 * `kind + id` key string made and hashed for each tool.call and tool.result cost more than the lookup itself.
 */
function roles(): Map<string, { opens: boolean; open: Map<string, Open> }> {
  const byType = new Map<string, { opens: boolean; open: Map<string, Open> }>();
  for (const [request, answer] of Object.entries(REQUEST_KINDS)) {
    const open = new Map<string, Open>();
    byType.set(request, { opens: true, open });
    byType.set(answer, { opens: false, open });
  }
  return byType;
}

/**
 * The state is saved again once the log has grown this much past it: a crash costs at most this much scan (tens
 * of ms). Each save reads and hashes the bytes since the last anchor, which in a stream of deltas can be a whole
 * commit's line: at 1 MiB a streaming log spent about as long on saves as on its commits.
 */
export const SAVE_EVERY = 4 << 20;

/**
 * Whether to save the state now: once the log's last anchor is SAVE_EVERY past the last save, unless the anchor
 * starts a line longer than the scan the save would spare the next open (which reads and hashes it again to
 * check the save). A turn's whole-text message is one such line; its turn.settled, an anchor of its own, follows.
 */
export function worthSaving(size: number, savedEnd: number, anchor: number): boolean {
  const spared = anchor - savedEnd;
  return spared > SAVE_EVERY && size - anchor < spared;
}

export class LogState {
  private readonly roles = roles();
  private opened = 0;
  private readonly turns = new Set<string>();

  static from(saved: OpenState): LogState {
    const state = new LogState();
    state.seed(saved);
    return state;
  }

  /** Starts from a saved state or a segment header's (what was open before the bytes that follow). */
  seed(saved: OpenState): void {
    this.observe(saved.requests);
    for (const turn of saved.openTurns) this.turns.add(turn);
  }

  /** Feed every durable event in log order. Replaying a suffix already seen leaves the same state. */
  observe(events: readonly SessionEvent[]): void {
    for (const e of events) {
      const type = e.type;
      if (type === "assistant.delta") continue;
      if (type === "turn.started" && e.turn) this.turns.add(e.turn);
      else if (type === "turn.settled" && e.turn) this.turns.delete(e.turn);
      const id = (e.data as { id?: unknown }).id;
      if (typeof id !== "string") continue;
      const role = this.roles.get(type);
      if (role === undefined) continue;
      if (!role.opens) {
        role.open.delete(id);
        continue;
      }
      // A repeated id replaces the earlier request in its place.
      const known = role.open.get(id);
      if (known !== undefined) known.event = e;
      else role.open.set(id, { event: e, order: this.opened++ });
    }
  }

  snapshot(): OpenState {
    const open: Open[] = [];
    for (const role of this.roles.values())
      if (role.opens) for (const entry of role.open.values()) open.push(entry);
    open.sort((a, b) => a.order - b.order);
    return { requests: open.map((entry) => entry.event), openTurns: [...this.turns] };
  }
}

/** The saved state and the stretch of the log it was taken at. */
export interface SavedState extends OpenState {
  v: 1;
  /** Last seq, and the byte length of the log, it covers. */
  seq: number;
  end: number;
  /** The last anchor line before `end` (a scan restarts there). */
  anchor: { seq: number; offset: number };
  /** sha256 of the log's bytes [anchor.offset, end). */
  hash: string;
  /** A refused batch's last seq, above `seq`: no later event of the log may take it (see JsonlEventLog). */
  burned?: number;
}

export const statePath = (logPath: string) => `${logPath}.state`;

export const hashOf = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The saved state, or undefined when there is none or it is not one (then the log is scanned whole). */
export async function loadState(logPath: string): Promise<SavedState | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await fsp.readFile(statePath(logPath), "utf8"));
  } catch {
    return undefined;
  }
  const s = value as Partial<SavedState> | null;
  if (
    s?.v !== 1 ||
    !Number.isInteger(s.seq) ||
    !Number.isInteger(s.end) ||
    !Number.isInteger(s.anchor?.offset) ||
    !Number.isInteger(s.anchor?.seq) ||
    typeof s.hash !== "string" ||
    !Array.isArray(s.requests) ||
    !Array.isArray(s.openTurns) ||
    (s.burned !== undefined && !Number.isInteger(s.burned))
  )
    return undefined;
  return s as SavedState;
}

/**
 * Replaces the saved state (a temp file renamed over it). Not fdatasync'd: a state lost or torn in a crash is
 * caught by its check and rebuilt, and costs only the time of one full scan.
 */
export async function saveState(logPath: string, state: SavedState): Promise<void> {
  const path = statePath(logPath);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await fsp.writeFile(tmp, JSON.stringify(state), { mode: 0o600 });
    await fsp.rename(tmp, path);
  } catch (err) {
    // A full disk fails the write part way: left, the temp would stay until the session is deleted.
    await fsp.rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

/**
 * Removes the temps of state saves and compactions of the log at `logPath` that died part way (a crash, a kill).
 * Only with the log's lock held: then no live writer of this log can own one. Also any temp beside it named for a
 * process now gone (tempName: a lock being taken, a record being written, a restore being staged), which another
 * process may be writing while we hold the lock: those are removed only once their writer is dead.
 */
export async function removeStaleTemps(logPath: string): Promise<void> {
  const [dir, name] = [nodePath.dirname(logPath), nodePath.basename(logPath)];
  const stem = name.replace(/\.jsonl$/, "");
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return; // nothing to tidy: the open that follows says what is wrong with the directory
  }
  const stale = (n: string) =>
    (n.startsWith(`${name}.state.`) && /\.state\.\d+\.tmp$/.test(n)) ||
    (n.startsWith(`${stem}.`) && n.endsWith(".jsonl.compact.tmp")) ||
    leftByDeadProcess(n);
  const remove = (n: string) =>
    fsp.rm(nodePath.join(dir, n), { recursive: true, force: true }).catch(() => {});
  await Promise.all(names.filter(stale).map(remove));
}

/** Saves the state of a log whose durable bytes end at `end`, with the hash of its bytes from the anchor on. */
export async function saveStateAt(
  io: LogIO,
  fd: number,
  logPath: string,
  state: Omit<SavedState, "v" | "hash">,
): Promise<void> {
  const region = await readFully(io, fd, state.anchor.offset, state.end - state.anchor.offset);
  await saveState(logPath, { v: 1, ...state, hash: hashOf(region) });
}

export async function dropState(logPath: string): Promise<void> {
  await fsp.rm(statePath(logPath), { force: true });
}

// One writer per session log across processes: `events.jsonl.lock` names the process that owns the log. Node has
// no flock, so the lock is a file made atomically (link(2) of a complete temp file, which fails if one exists)
// and is taken over only when its holder is gone: its pid is dead, a zombie, or now a different process (its
// start time differs, so a reused pid does not keep a dead holder's lock alive). Readers never take it.
import { randomBytes } from "node:crypto";
import fsp from "node:fs/promises";
import { hostname } from "node:os";
import { tempName } from "../../core/checkpoints/temps.js";
import { processAlive, processStart } from "../../core/process-identity.js";
import { StoreError } from "./errors.js";

/** Who holds a log, as another process is told: the daemon says where to reach it instead. */
export interface LogHolder {
  kind: "daemon" | "cli" | "process";
  /** The daemon's URL, once it listens. */
  url?: string;
}

interface LockRecord extends LogHolder {
  pid: number;
  host: string;
  /** Boot id + start time of the process (Linux): tells the holder apart from a later process with its pid. */
  start?: string;
  /** This acquisition alone, so release never removes a lock that another process took over. */
  nonce: string;
}

/** The log is owned by another live process (or by another open of it in this one). */
export class LogLockedError extends StoreError {
  override name = "LogLockedError";
  constructor(
    session: string,
    message: string,
    readonly holder: LogHolder & { pid: number; host: string },
  ) {
    super("locked", message, { session });
  }
}

export interface LogLock {
  readonly path: string;
  /** Removes the lock if it is still this one. Never throws: a lock left behind is stale once we exit. */
  release(): Promise<void>;
}

export interface LockOptions {
  holder?: LogHolder;
  /** The session, for the error message. */
  session: string;
  /** Is process `pid` (recorded with `start`) still running? Injectable for tests. */
  alive?: (pid: number, start: string | undefined) => boolean;
}

/** Takes the lock for the log at `logPath`, or throws LogLockedError naming the live owner. */
export async function acquireLogLock(logPath: string, options: LockOptions): Promise<LogLock> {
  const path = `${logPath}.lock`;
  const alive = options.alive ?? processAlive;
  const start = processStart(process.pid);
  const record: LockRecord = {
    ...(options.holder ?? { kind: "process" }),
    pid: process.pid,
    host: hostname(),
    ...(start ? { start } : {}),
    nonce: randomBytes(8).toString("hex"),
  };
  const text = `${JSON.stringify(record)}\n`;
  // Named for this process, so that one left by a kill is removed once it is gone (removeStaleTemps).
  const tmp = `${path}.${tempName("tmp")}`;
  try {
    await fsp.writeFile(tmp, text, { mode: 0o600, flag: "wx" });
    // A stale lock is removed by one taker at a time (takeOver); the takers then race to place theirs.
    for (let attempt = 0; attempt < TAKER_ROUNDS; attempt++) {
      try {
        await place(tmp, path, text);
        return { path, release: () => release(path, record.nonce) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const held = await readLock(path);
      if (held === undefined) continue; // released meanwhile
      if (isLive(held, alive)) throw lockedError(options.session, held);
      await takeOver(path, held.text);
    }
    throw new StoreError("brain_error", `cannot lock ${logPath}: other processes keep taking the lock`);
  } catch (err) {
    if (err instanceof StoreError) throw err;
    throw new StoreError("brain_error", `cannot lock ${logPath}: ${(err as Error).message}`, { cause: err });
  } finally {
    await fsp.rm(tmp, { force: true }).catch(() => {});
  }
}

/** Creates the lock at `path` unless one exists (EEXIST). */
async function place(tmp: string, path: string, text: string): Promise<void> {
  try {
    await fsp.link(tmp, path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw err;
    // A file system without hard links: exclusive create, then write. A reader may see it empty for a moment.
    await fsp.writeFile(path, text, { mode: 0o600, flag: "wx" });
  }
}

async function release(path: string, nonce: string): Promise<void> {
  const held = await readLock(path).catch(() => undefined);
  if (held?.record?.nonce === nonce) await fsp.rm(path, { force: true }).catch(() => {});
}

interface HeldLock {
  text: string;
  record?: LockRecord;
  /** ms since the lock was last written. */
  age: number;
}

async function readLock(path: string): Promise<HeldLock | undefined> {
  let text: string;
  let age: number;
  try {
    age = Date.now() - (await fsp.stat(path)).mtimeMs;
    text = await fsp.readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const value = JSON.parse(text) as LockRecord;
    if (Number.isInteger(value.pid) && value.pid > 0 && typeof value.host === "string")
      return { text, record: value, age };
  } catch {}
  return { text, age };
}

/**
 * The pid of the live process that holds the lock of the log at `logPath`, without taking it; undefined when
 * nobody does (no lock, or its holder is gone). Another machine's holder counts as live (see isLive).
 */
export async function liveHolder(logPath: string, alive = processAlive): Promise<number | undefined> {
  const held = await readLock(`${logPath}.lock`);
  return held?.record && isLive(held, alive) ? held.record.pid : undefined;
}

/** An unreadable lock this young may still be being written (on a file system without hard links). */
const WRITING_MS = 5_000;

function isLive(held: HeldLock, alive: (pid: number, start: string | undefined) => boolean): boolean {
  const r = held.record;
  if (!r) return held.age < WRITING_MS;
  // Another machine's process (a shared file system) cannot be checked from here: it counts as live.
  if (r.host !== hostname()) return true;
  return alive(r.pid, r.start);
}

/** Rounds of place-or-take-over before giving up: a taker waiting on another's takeOver spends one per wait. */
const TAKER_ROUNDS = 200;
/** A takeover takes milliseconds: a breaker this old was left by a taker that died in it. */
const BREAKER_STALE_MS = 10_000;

/**
 * Removes the stale lock, holding `<lock>.break` (made exclusively) meanwhile, so takers go one at a time. Without
 * it a taker that read the stale lock could move aside or delete the lock that a faster taker had just placed, and
 * two processes would each hold the log. Under the breaker the lock can change only by its holder's release, and
 * its holder is gone: what was read stale is still stale when it is removed. Another taker's breaker means wait
 * (the caller's next round), unless it is old: then it was left by a crash and is removed.
 */
async function takeOver(path: string, staleText: string): Promise<void> {
  const breaker = `${path}.break`;
  try {
    await fsp.writeFile(breaker, `${process.pid}\n`, { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    const since = await fsp.stat(breaker).then(
      (st) => Date.now() - st.mtimeMs,
      () => 0,
    );
    if (since > BREAKER_STALE_MS) await fsp.rm(breaker, { force: true });
    else await new Promise((resolve) => setTimeout(resolve, 5));
    return;
  }
  try {
    const now = await fsp.readFile(path, "utf8").catch(() => undefined);
    if (now === staleText) await fsp.rm(path, { force: true });
  } finally {
    await fsp.rm(breaker, { force: true });
  }
}

function lockedError(session: string, held: HeldLock) {
  const r = held.record;
  if (!r) {
    const holder = { kind: "process" as const, pid: 0, host: hostname() };
    return new LogLockedError(
      session,
      `session ${session} is being opened by another process: try again`,
      holder,
    );
  }
  const holder = { kind: r.kind, pid: r.pid, host: r.host, ...(r.url ? { url: r.url } : {}) };
  if (r.pid === process.pid && r.host === hostname()) {
    return new LogLockedError(session, `session ${session} is already open in this process`, holder);
  }
  const where = placeOf(holder);
  if (r.kind === "daemon") {
    const server = r.url ?? "URL";
    return inDaemon(
      session,
      holder,
      `use \`brain run --server ${server} --session ${session} PROMPT\` or \`brain attach ${session} --server ${server}\``,
    );
  }
  const stale =
    r.host === hostname()
      ? ""
      : `; if no Brain runs there any more, delete the session's events.jsonl.lock and try again`;
  const who = r.kind === "cli" ? "another `brain` command" : "another Brain process";
  return new LogLockedError(
    session,
    `session ${session} is open in ${who} (${where}); ${RULE}: wait for it to finish${stale}`,
    holder,
  );
}

const RULE = "one process writes a session at a time";

const placeOf = (holder: LockedBy) =>
  holder.host === hostname() ? `pid ${holder.pid}` : `pid ${holder.pid} on ${holder.host}`;

type LockedBy = LogLockedError["holder"];

/**
 * Session `session` is open in the daemon `holder`: refused, with `fix`, what to do through the daemon instead (a
 * command other than a prompt, as `brain checkpoint`, names its own route: `brain run --server` takes no checkpoint).
 */
export function inDaemon(session: string, holder: LockedBy, fix: string): LogLockedError {
  const at = holder.url ? ` at ${holder.url}` : "";
  return new LogLockedError(
    session,
    `session ${session} is open in the Brain daemon${at} (${placeOf(holder)}); ${RULE}: ${fix}`,
    holder,
  );
}

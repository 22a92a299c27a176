import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open, realpath } from "node:fs/promises";
import path from "node:path";
import type { NativeFile } from "../../protocol/runner.js";
import { CheckpointError, errnoCode, refused } from "./errors.js";
import { hashRange, inspectRange, ShortReadError } from "./io.js";
import type { CheckpointFile, CheckpointManifest, CheckpointSegment } from "./manifest.js";
import { openedPath } from "./opened.js";
import { isInside, pathProblem } from "./paths.js";
import { scanReach } from "./secret-scan.js";

/** Size of the head and tail windows hashed to detect rewrites of an append-only file's earlier bytes. */
export const WINDOW = 4096;

/** A value no native file may hold, and the name a refusal gives it (never the value itself). */
export interface SecretBytes {
  name: string;
  bytes: Buffer;
}

/**
 * A validated file, with what it needs stored. It is not held open: a checkpoint of many files would hold one
 * descriptor each (EMFILE, and the daemon starved of them meanwhile). `reopenPlanned` opens it again to store it,
 * and refuses unless it is the same file at the same place; the copy re-hashes the bytes it stores.
 */
export interface PlannedFile {
  file: NativeFile;
  /** The native dir's realpath, the file's real path under it, and the inode that was checked. */
  source: { root: string; real: string; dev: number; ino: number };
  /** Segments carried over from the previous checkpoint. */
  kept: CheckpointSegment[];
  /** The bytes to store now, already hashed. */
  fresh?: { offset: number; length: number; sha256: string };
  head_sha256?: string;
  tail_sha256?: string;
  /** The file's permission bits when it was read. */
  mode?: number;
}

/**
 * Checks every file against every rule before anything is written, and works out what each needs stored.
 * Opens one file at a time. On a refusal, throws a CheckpointError.
 */
export async function planCheckpoint(
  nativeDir: string,
  files: NativeFile[],
  previous: CheckpointManifest | undefined,
  secrets: SecretBytes[],
  /** The session, named in a credential's refusal (its way on). */
  session?: string,
): Promise<PlannedFile[]> {
  const seen = new Set<string>();
  for (const file of files) {
    const problem = pathProblem(file.path);
    if (problem) throw refused(file.path, problem);
    if (seen.has(file.path)) throw refused(file.path, "it is listed twice; list each file once");
    seen.add(file.path);
  }
  let root: string;
  try {
    root = await realpath(nativeDir);
  } catch (err) {
    throw new CheckpointError(
      "brain_error",
      `checkpoint refused: native dir ${nativeDir} is not readable (${errnoCode(err)})`,
    );
  }
  const prevFiles = new Map(previous?.files.map((f) => [f.path, f]));
  const planned: PlannedFile[] = [];
  for (const file of files) {
    const { handle, real, st } = await openChecked(root, file);
    try {
      // Only append-only files are stored incrementally: a file that is not is stored whole. One that was not and
      // is again (a harness's rewrite of it stored whole) builds on the last: its windows are checked alike.
      const prev = prevFiles.get(file.path);
      const bytes = await planBytes(
        handle,
        file,
        file.append_only && prev?.head_sha256 !== undefined ? prev : undefined,
        previous?.id,
        secrets,
        session,
      ).catch((err) => {
        throw shrankWhileRead(file, err);
      });
      const source = { root, real, dev: st.dev, ino: st.ino };
      planned.push({ file, source, ...bytes, mode: st.mode & 0o777 });
    } finally {
      await handle.close();
    }
  }
  return planned;
}

/** Opens a planned file again to store it; refuses unless it is still the file planned, where it was planned. */
export async function reopenPlanned(planned: PlannedFile): Promise<FileHandle> {
  const { root, real } = planned.source;
  const handle = await openNoFollow(real, planned.file);
  try {
    await checkOpened(handle, root, real, planned.file, planned.source);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** What a file that is not a regular file is, for a refusal that names it. */
export function fileKind(st: Stats): string {
  if (st.isSymbolicLink()) return "a symbolic link";
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  return "a device";
}

const changed = (file: NativeFile) =>
  refused(file.path, "it changed while being checkpointed; checkpoint only after the turn has settled");

async function openChecked(
  root: string,
  file: NativeFile,
): Promise<{ handle: FileHandle; real: string; st: Stats }> {
  const missing = () =>
    refused(file.path, "it does not exist in the native dir; list only files the harness wrote");
  // A symlinked parent could lead anywhere: resolve it and require the result to stay under the real root.
  const joined = path.join(root, ...file.path.split("/"));
  let parent: string;
  try {
    parent = await realpath(path.dirname(joined));
  } catch (err) {
    if (["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) throw missing();
    throw unreadable(file, err);
  }
  if (!isInside(root, parent)) throw resolvesOutside(file, parent);
  const real = path.join(parent, path.basename(joined));
  let st: Stats;
  try {
    st = await lstat(real);
  } catch (err) {
    if (["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) throw missing();
    throw unreadable(file, err);
  }
  if (!st.isFile()) {
    throw refused(
      file.path,
      `it is ${fileKind(st)}, not a regular file; list only regular files (not links or dirs)`,
    );
  }
  if (st.size !== file.size) {
    throw refused(
      file.path,
      `its size on disk is ${st.size} bytes but ${file.size} were declared; ` +
        "report the exact size, and checkpoint only after the turn has settled",
    );
  }
  const handle = await openNoFollow(real, file);
  try {
    return { handle, real, st: await checkOpened(handle, root, real, file, st) };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

function resolvesOutside(file: NativeFile, where: string) {
  return refused(
    file.path,
    `it resolves to ${where}, outside the native dir (through a symbolic link); ` +
      "keep native files in real directories under the native dir",
  );
}

/**
 * O_NOFOLLOW covers the last component only: checkOpened answers for the directories on the way. O_NONBLOCK: the
 * file may have been swapped for a FIFO since its lstat, whose open would wait (the checkpoint, and one of Node's
 * few file system threads, for good) until something wrote to it; checkOpened refuses whatever was opened instead.
 */
async function openNoFollow(real: string, file: NativeFile): Promise<FileHandle> {
  try {
    return await open(real, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    // Gone, or a link (ELOOP) since it was checked: swapped under us.
    if (["ENOENT", "ENOTDIR", "ELOOP"].includes(errnoCode(err) ?? "")) throw changed(file);
    throw unreadable(file, err);
  }
}

/** The daemon's user may not read the file, or search a directory on its way: said so, not as a bare EACCES. */
function unreadable(file: NativeFile, err: unknown): unknown {
  const code = errnoCode(err);
  if (code !== "EACCES" && code !== "EPERM") return err;
  return refused(
    file.path,
    `the daemon may not read it (${code}); let the daemon's user read it and search the directories above it, ` +
      "or leave it out of the harness's list of native files",
  );
}

/**
 * The checks made by name (realpath of the directory, lstat) hold for the file opened only if nothing was
 * swapped between them and the open: require the descriptor's own location to be the path checked, and its
 * inode the one checked. Returns the descriptor's stat.
 */
async function checkOpened(
  handle: FileHandle,
  root: string,
  real: string,
  file: NativeFile,
  expected: { dev: number; ino: number },
): Promise<Stats> {
  const at = await openedPath(handle);
  if (at !== undefined && at !== real) {
    // A deleted file reads "<path> (deleted)": inside, but not a file the harness still has.
    throw isInside(root, at) ? changed(file) : resolvesOutside(file, at);
  }
  if (
    at === undefined &&
    (await realpath(path.dirname(real)).catch(() => undefined)) !== path.dirname(real)
  ) {
    // No /proc view of descriptors: a second resolution after the open narrows the window; only openat(2),
    // which Node lacks, would close it.
    throw changed(file);
  }
  const st = await handle.stat();
  if (!st.isFile() || st.ino !== expected.ino || st.dev !== expected.dev || st.size !== file.size) {
    throw changed(file);
  }
  return st;
}

/** A ShortReadError means the file shrank under the reader: the harness checkpointed before its turn settled. */
function shrankWhileRead(file: NativeFile, err: unknown): unknown {
  if (!(err instanceof ShortReadError)) return err;
  return refused(
    file.path,
    `it shrank while being read (${err.message}); checkpoint only after the turn has settled`,
  );
}

/** What planBytes works out: what to keep, what to store, the append-only windows. */
type PlannedBytes = Pick<PlannedFile, "kept" | "fresh" | "head_sha256" | "tail_sha256">;

async function planBytes(
  handle: FileHandle,
  file: NativeFile,
  prev: CheckpointFile | undefined,
  prevId: string | undefined,
  secrets: SecretBytes[],
  session: string | undefined,
): Promise<PlannedBytes> {
  let start = 0;
  if (prev) {
    // Only append-only files are stored incrementally, so this is the one promise we must hold the harness to.
    const rewritten = (from: number, to: number) =>
      refused(
        file.path,
        `it is append-only but bytes ${from}..${to} differ from checkpoint ${prevId}; an append-only file may ` +
          "only grow at its end (declare it append_only: false if the harness rewrites it)",
      );
    if (file.size < prev.size) {
      throw refused(
        file.path,
        `it is append-only but shrank from ${prev.size} to ${file.size} bytes since checkpoint ${prevId}; ` +
          "an append-only file may only grow (declare it append_only: false if the harness rewrites it)",
      );
    }
    const headEnd = Math.min(WINDOW, prev.size);
    if ((await hashRange(handle, 0, headEnd)) !== prev.head_sha256) throw rewritten(0, headEnd);
    const tailStart = Math.max(0, prev.size - WINDOW);
    if ((await hashRange(handle, tailStart, prev.size)) !== prev.tail_sha256)
      throw rewritten(tailStart, prev.size);
    start = prev.size;
  }
  // Only new bytes can hold a new secret, but one may straddle the old end: re-scan what it could take before it.
  const values = secrets.map((s) => s.bytes);
  const from = Math.max(0, start - scanReach(values));
  const { sha256, hit } = await inspectRange(handle, from, start, file.size, values);
  if (hit) {
    const how = `${hit.encoded ? `${hit.encoded}-encoded, ` : ""}${hit.escaped ? "JSON-escaped, " : ""}`;
    throw refused(
      file.path,
      `it contains a credential (the value of ${secrets[hit.index]!.name}, ${how}at byte ${hit.offset}); native files ` +
        "must never hold credentials (provider keys, tokens, secret-named variables): keep them out of the harness's saved state" +
        rebuildWayOn(session),
    );
  }
  const plan: PlannedBytes = { kept: prev?.segments ?? [] };
  if (file.size > start) plan.fresh = { offset: start, length: file.size - start, sha256 };
  // Kept for every file: one stored whole is the base of the next checkpoint that lists it as append-only.
  plan.head_sha256 =
    prev && prev.size >= WINDOW ? prev.head_sha256 : await hashRange(handle, 0, Math.min(WINDOW, file.size));
  plan.tail_sha256 = await hashRange(handle, Math.max(0, file.size - WINDOW), file.size);
  return plan;
}

/**
 * How a session whose native state holds a credential goes on: its files keep it (an append-only one for good), so
 * every later checkpoint, and so every fork, would be refused; the log holds the value redacted, and a rebuild
 * rewrites the native state from it.
 */
function rebuildWayOn(session: string | undefined): string {
  const how = session
    ? `brain sessions rebuild ${session}, or POST /v1/sessions/${session}/rebuild`
    : "brain sessions rebuild ID";
  return `; to checkpoint this session, rewrite its native state from its log, where the value is redacted (${how}), then checkpoint again`;
}

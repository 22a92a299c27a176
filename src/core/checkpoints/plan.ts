import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open, realpath } from "node:fs/promises";
import path from "node:path";
import type { NativeFile } from "../../protocol/runner.js";
import { CheckpointError, errnoCode, refused } from "./errors.js";
import { hashRange, inspectRange, ShortReadError } from "./io.js";
import type { CheckpointFile, CheckpointManifest, CheckpointSegment } from "./manifest.js";
import { isInside, pathProblem } from "./paths.js";

/** Size of the head and tail windows hashed to detect rewrites of an append-only file's earlier bytes. */
export const WINDOW = 4096;

/** A validated file, held open so the bytes copied are the bytes checked. */
export interface PlannedFile {
  file: NativeFile;
  handle: FileHandle;
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
 * On a refusal, closes what it opened and throws a CheckpointError.
 */
export async function planCheckpoint(
  nativeDir: string,
  files: NativeFile[],
  previous: CheckpointManifest | undefined,
  secrets: Buffer[],
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
  try {
    for (const file of files) {
      const handle = await openChecked(root, file);
      try {
        // Only append-only files are stored incrementally: a file that is not (or was not) is stored whole.
        const prev = prevFiles.get(file.path);
        const plan = await planBytes(
          handle,
          file,
          prev?.append_only && file.append_only ? prev : undefined,
          previous?.id,
          secrets,
        ).catch((err) => {
          throw shrankWhileRead(file, err);
        });
        plan.mode = (await handle.stat()).mode & 0o777;
        planned.push(plan);
      } catch (err) {
        await handle.close();
        throw err;
      }
    }
    return planned;
  } catch (err) {
    await Promise.all(planned.map((p) => p.handle.close()));
    throw err;
  }
}

function kind(st: Stats): string {
  if (st.isSymbolicLink()) return "a symbolic link";
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  return "a device";
}

async function openChecked(root: string, file: NativeFile): Promise<FileHandle> {
  const missing = () =>
    refused(file.path, "it does not exist in the native dir; list only files the harness wrote");
  // A symlinked parent could lead anywhere: resolve it and require the result to stay under the real root.
  const joined = path.join(root, ...file.path.split("/"));
  let parent: string;
  try {
    parent = await realpath(path.dirname(joined));
  } catch (err) {
    if (["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) throw missing();
    throw err;
  }
  if (!isInside(root, parent)) {
    throw refused(
      file.path,
      `its directory resolves to ${parent}, outside the native dir (through a symbolic link); ` +
        "keep native files in real directories under the native dir",
    );
  }
  const real = path.join(parent, path.basename(joined));
  let st: Stats;
  try {
    st = await lstat(real);
  } catch (err) {
    if (["ENOENT", "ENOTDIR"].includes(errnoCode(err) ?? "")) throw missing();
    throw err;
  }
  if (!st.isFile()) {
    throw refused(
      file.path,
      `it is ${kind(st)}, not a regular file; list only regular files (not links or dirs)`,
    );
  }
  if (st.size !== file.size) {
    throw refused(
      file.path,
      `its size on disk is ${st.size} bytes but ${file.size} were declared; ` +
        "report the exact size, and checkpoint only after the turn has settled",
    );
  }
  // O_NOFOLLOW plus the inode check: the file opened is the one just checked, not a link swapped in since.
  const handle = await open(real, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  const fst = await handle.stat();
  if (fst.ino !== st.ino || fst.dev !== st.dev || fst.size !== file.size) {
    await handle.close();
    throw refused(
      file.path,
      "it changed while being checkpointed; checkpoint only after the turn has settled",
    );
  }
  return handle;
}

/** A ShortReadError means the file shrank under the reader: the harness checkpointed before its turn settled. */
function shrankWhileRead(file: NativeFile, err: unknown): unknown {
  if (!(err instanceof ShortReadError)) return err;
  return refused(
    file.path,
    `it shrank while being read (${err.message}); checkpoint only after the turn has settled`,
  );
}

async function planBytes(
  handle: FileHandle,
  file: NativeFile,
  prev: CheckpointFile | undefined,
  prevId: string | undefined,
  secrets: Buffer[],
): Promise<PlannedFile> {
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
  // Only new bytes can hold a new secret, but one may straddle the old end: re-scan length-1 bytes before it.
  const overlap = Math.max(0, ...secrets.map((s) => s.length - 1));
  const { sha256, hit } = await inspectRange(handle, Math.max(0, start - overlap), start, file.size, secrets);
  if (hit) {
    throw refused(
      file.path,
      `it contains a credential (secret #${hit.index + 1} of the session's, at byte ${hit.offset}); ` +
        "native files must never hold provider credentials: keep them out of the harness's saved state",
    );
  }
  const plan: PlannedFile = { file, handle, kept: prev?.segments ?? [] };
  if (file.size > start) plan.fresh = { offset: start, length: file.size - start, sha256 };
  if (file.append_only) {
    plan.head_sha256 =
      prev && prev.size >= WINDOW
        ? prev.head_sha256
        : await hashRange(handle, 0, Math.min(WINDOW, file.size));
    plan.tail_sha256 = await hashRange(handle, Math.max(0, file.size - WINDOW), file.size);
  }
  return plan;
}

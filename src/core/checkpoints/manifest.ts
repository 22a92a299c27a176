import type { NativeFile } from "../../protocol/runner.js";
import { CheckpointError } from "./errors.js";
import { pathProblem } from "./paths.js";

/** Bytes [offset, offset + length) of a file, stored in blob `blob` (named by its sha256). */
export interface CheckpointSegment {
  blob: string;
  offset: number;
  length: number;
  sha256: string;
}

export interface CheckpointFile extends NativeFile {
  /** Contiguous from offset 0, together exactly `size` bytes. A whole file is one segment (none when empty). */
  segments: CheckpointSegment[];
  /**
   * sha256 of the first 4 KiB and of the last 4 KiB, to catch rewrites cheaply next time: always there for an
   * append-only file, and for others in checkpoints newer than they.
   */
  head_sha256?: string;
  tail_sha256?: string;
  /** Permission bits of the original (0o777 at most): a restored file is never readable by more than it was. */
  mode?: number;
}

export interface CheckpointManifest {
  id: string;
  created_at: string;
  files: CheckpointFile[];
}

const SHA256 = /^[0-9a-f]{64}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/**
 * Parses a manifest read from disk. Everything restore relies on is checked here (paths, contiguous segments,
 * blob names), so a damaged or hand-edited manifest fails loudly instead of writing outside the target.
 */
export function parseManifest(text: string, id: string): CheckpointManifest {
  const bad = (why: string) => new CheckpointError("brain_error", `not a checkpoint manifest: ${why}`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw bad(`not JSON (${(err as Error).message})`);
  }
  if (!isObject(raw) || raw.id !== id || typeof raw.created_at !== "string" || !Array.isArray(raw.files)) {
    throw bad("expected {id, created_at, files}");
  }
  // Each path is one file, and no file is another's directory: restore could not make both (EEXIST, ENOTDIR).
  const taken = new Map<string, "file" | "directory">();
  const files = raw.files.map((f: unknown, i): CheckpointFile => {
    if (
      !isObject(f) ||
      typeof f.path !== "string" ||
      !isCount(f.size) ||
      typeof f.append_only !== "boolean"
    ) {
      throw bad(`files[${i}] needs path, size, append_only`);
    }
    const problem = pathProblem(f.path);
    if (problem) throw bad(`files[${i}]: ${problem}`);
    const clash = taken.get(f.path);
    if (clash) throw bad(`files[${i}]: ${JSON.stringify(f.path)} is already a ${clash} of the manifest`);
    const parts = f.path.split("/");
    for (let end = 1; end < parts.length; end++) {
      const dir = parts.slice(0, end).join("/");
      if (taken.get(dir) === "file") {
        throw bad(`files[${i}]: ${JSON.stringify(dir)} is a file of the manifest, not a directory`);
      }
      taken.set(dir, "directory");
    }
    taken.set(f.path, "file");
    if (!Array.isArray(f.segments)) throw bad(`files[${i}].segments is not an array`);
    let end = 0;
    const segments = f.segments.map((s: unknown, j): CheckpointSegment => {
      if (!isObject(s) || typeof s.blob !== "string" || !isCount(s.offset) || !isCount(s.length)) {
        throw bad(`files[${i}].segments[${j}] needs blob, offset, length, sha256`);
      }
      if (typeof s.sha256 !== "string" || !SHA256.test(s.sha256) || s.blob !== s.sha256) {
        throw bad(`files[${i}].segments[${j}] blob must be named by its sha256`);
      }
      if (s.offset !== end || s.length === 0) throw bad(`files[${i}].segments[${j}] is not contiguous`);
      end += s.length;
      return { blob: s.blob, offset: s.offset, length: s.length, sha256: s.sha256 };
    });
    if (end !== f.size) throw bad(`files[${i}] segments cover ${end} bytes, size is ${f.size}`);
    const file: CheckpointFile = { path: f.path, size: f.size, append_only: f.append_only, segments };
    const windows = typeof f.head_sha256 === "string" && typeof f.tail_sha256 === "string";
    if (f.append_only && !windows) throw bad(`files[${i}] is append-only without head_sha256/tail_sha256`);
    if (windows) {
      file.head_sha256 = f.head_sha256 as string;
      file.tail_sha256 = f.tail_sha256 as string;
    }
    if (f.mode !== undefined) {
      if (!isCount(f.mode) || f.mode > 0o777) throw bad(`files[${i}].mode is not a permission mode`);
      file.mode = f.mode;
    }
    return file;
  });
  return { id, created_at: raw.created_at, files };
}

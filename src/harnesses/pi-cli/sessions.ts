// pi keeps a session as one append-only JSONL file; with `--session-dir` it sits directly in that dir. Its first
// line is a header whose `cwd` pi runs the tools in when it resumes the file, so a session restored under
// another directory must have that line rewritten (cli-relocation.md).
import { lstatSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { readAgentFileSync, writeAgentFileSync } from "../agent-files.js";
import { noteRewrittenSync, REWRITTEN_MARKER } from "../rewritten-files.js";

/**
 * The newest session file in `dir` (names start with an ISO timestamp), or undefined. Only regular files: what pi
 * runs can write here, and a FIFO or link taken for the newest would be opened at every start.
 */
export function latestSessionFile(dir: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const files = names
    .filter((name) => name.endsWith(".jsonl"))
    .filter((name) => lstatSync(join(dir, name), { throwIfNoEntry: false })?.isFile())
    .sort();
  const last = files.at(-1);
  return last ? join(dir, last) : undefined;
}

/** The header is read from this much of the file's start: the rest is read only to rewrite it. */
const HEADER_BYTES = 64 * 1024;

function firstLine(text: string): string {
  const nl = text.indexOf("\n");
  return nl < 0 ? text : text.slice(0, nl);
}

/**
 * Points the session's header at `cwd`; returns true when it had to be rewritten. `file` is under `native`, read
 * and written only as a regular file through real directories from there.
 */
export function rebaseSession(native: string, file: string, cwd: string): boolean {
  const header = JSON.parse(firstLine(readAgentFileSync(native, file, HEADER_BYTES) ?? "")) as {
    type?: string;
    cwd?: string;
  };
  if (header.type !== "session" || header.cwd === cwd) return false;
  const text = readAgentFileSync(native, file) ?? "";
  const nl = text.indexOf("\n");
  const rest = nl < 0 ? "" : text.slice(nl);
  // Noted first: a file rewritten but not noted would be stored as an append to checkpoints it no longer extends.
  noteRewrittenSync(native, REWRITTEN_MARKER, relative(native, file));
  writeAgentFileSync(native, file, JSON.stringify({ ...header, cwd }) + rest);
  return true;
}

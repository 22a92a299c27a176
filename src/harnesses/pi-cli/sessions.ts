// pi keeps a session as one append-only JSONL file; with `--session-dir` it sits directly in that dir. Its first
// line is a header whose `cwd` pi runs the tools in when it resumes the file, so a session restored under
// another directory must have that line rewritten (cli-relocation.md).
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { writeAgentFileSync } from "../agent-files.js";

/** The newest session file in `dir` (names start with an ISO timestamp), or undefined. */
export function latestSessionFile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort();
  const last = files.at(-1);
  return last ? join(dir, last) : undefined;
}

function firstLine(file: string): string {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.toString("utf8", 0, n);
    const nl = text.indexOf("\n");
    return nl < 0 ? text : text.slice(0, nl);
  } finally {
    closeSync(fd);
  }
}

/** Points the session's header at `cwd`; returns true when it had to be rewritten. `file` is under `native`. */
export function rebaseSession(native: string, file: string, cwd: string): boolean {
  const header = JSON.parse(firstLine(file)) as { type?: string; cwd?: string };
  if (header.type !== "session" || header.cwd === cwd) return false;
  const text = readFileSync(file, "utf8");
  const nl = text.indexOf("\n");
  const rest = nl < 0 ? "" : text.slice(nl);
  writeAgentFileSync(native, file, JSON.stringify({ ...header, cwd }) + rest);
  return true;
}

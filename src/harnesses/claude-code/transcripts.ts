// Where Claude Code keeps a session, and moving it when the session's working directory changes (a restore or
// fork into another native dir). The transcript lives at
// `$CLAUDE_CONFIG_DIR/projects/<folder(cwd)>/<session-id>.jsonl`, and `--resume <id>` only looks in the folder
// of the current cwd, so a moved session must move folders (cli-relocation.md).
import { constants, existsSync, readdirSync, realpathSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { fileKind } from "../../core/checkpoints/plan.js";
import type { ContainerUser } from "../../core/harness.js";
import { preview } from "../../protocol/frames.js";
import { moveAgentFileSync } from "../agent-files.js";

/** Claude's folder name for a cwd: every character outside [A-Za-z0-9] becomes "-"; long names get a hash. */
export function projectFolder(cwd: string): string {
  const name = cwd.replace(/[^A-Za-z0-9]/g, "-");
  if (name.length <= 200) return name;
  let hash = 0;
  for (let i = 0; i < cwd.length; i++) hash = (Math.imul(hash, 31) + cwd.charCodeAt(i)) | 0;
  return `${name.slice(0, 200)}-${Math.abs(hash).toString(36)}`;
}

/**
 * A session id Brain makes a file name of: a plain name, as Claude Code's UUIDs are. The id comes from what runs
 * in the session (the CLI's stream, an ACP agent's session/new, the state file in the native dir): "../../…"
 * would have Brain look for, read and search a transcript anywhere on the host.
 */
export const CLAUDE_SESSION_ID = /^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/;

/** Where Claude Code keeps session `sessionId`; throws for an id that is not a plain name (CLAUDE_SESSION_ID). */
export function transcriptPath(configDir: string, cwd: string, sessionId: string): string {
  if (!CLAUDE_SESSION_ID.test(sessionId))
    throw new Error(
      `"${preview(sessionId, 80)}" is not a Claude session id (letters, digits, '-' and '_'): Brain makes no file name of it`,
    );
  return join(configDir, "projects", projectFolder(realpathSync(cwd)), `${sessionId}.jsonl`);
}

/**
 * Makes sure the session's transcript (and its sub-agent folder, if any) sits in the folder for `cwd`, moving
 * it from whichever project folder holds it. Returns true when a transcript exists (the session can resume).
 * `configDir` is under the native dir `native`, which an agent can write: the moves go only through real
 * directories from there. `owner` is the user Claude runs as when not Brain's: the folder made and the moved
 * transcript are its, for it to go on writing.
 */
export function placeTranscript(
  native: string,
  configDir: string,
  cwd: string,
  sessionId: string,
  owner?: ContainerUser,
): boolean {
  const target = transcriptPath(configDir, cwd, sessionId);
  if (existsSync(target)) return true;
  const projects = join(configDir, "projects");
  if (!existsSync(projects)) return false;
  for (const folder of readdirSync(projects)) {
    const found = join(projects, folder, `${sessionId}.jsonl`);
    if (!existsSync(found)) continue;
    moveAgentFileSync(native, found, target, owner);
    const extras = join(projects, folder, sessionId);
    if (existsSync(extras)) moveAgentFileSync(native, extras, join(target, "..", sessionId), owner);
    return true;
  }
  return false;
}

/** How much of a transcript's end to read: the turn's last record is at or near the end. */
const TAIL_BYTES = 1 << 20;

/** Something other than a regular file where the transcript should be: an agent put it there. */
export class NotRegularFile extends Error {
  constructor(
    readonly file: string,
    readonly kind: string,
  ) {
    super(`${file} is ${kind}, not a regular file`);
  }
}

/**
 * The end of a transcript (its last MiB), undefined when there is no file to open. The agent can write where the
 * transcript is: a FIFO there would hold the open (and one of Node's few file system threads) until something
 * wrote to it, so nothing but a regular file is opened; anything else is a NotRegularFile.
 */
export async function transcriptTail(file: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw new NotRegularFile(file, "a symbolic link");
    return undefined;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new NotRegularFile(file, fileKind(st));
    const { size } = st;
    const length = Math.min(size, TAIL_BYTES);
    const tail = Buffer.alloc(length);
    await handle.read(tail, 0, length, size - length);
    return tail.toString("utf8");
  } finally {
    await handle.close();
  }
}

/** Whether the transcript holds the record with this uuid and ends at a record boundary (no line half written). */
export async function holdsRecord(file: string, uuid: string): Promise<boolean> {
  const text = await transcriptTail(file);
  if (!text?.endsWith("\n")) return false;
  return text.includes(`"uuid":"${uuid}"`);
}

/** How long a checkpoint waits for the CLI to write the settled turn's last record to its transcript. */
export const TRANSCRIPT_WAIT_MS = 5_000;

/** Waits until the transcript holds the record (true), or the CLI is gone or the wait is over (false). */
export async function recordWritten(file: string, uuid: string, alive: () => boolean): Promise<boolean> {
  const deadline = Date.now() + TRANSCRIPT_WAIT_MS;
  for (;;) {
    // Checked before the read: a CLI that has exited has written all it ever will.
    const gone = !alive();
    if (await holdsRecord(file, uuid)) return true;
    if (gone || Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

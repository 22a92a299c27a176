// A Codex thread restored into another directory. Codex's rollout names the working directory (session_meta,
// turn_context, the <environment_context> the model was shown) and CODEX_HOME (the skills list in a developer
// message it replays). Resumed with a different cwd, Codex keeps the old paths in the replayed history and sends
// the model a fresh skills message and environment context besides: the restored conversation is no longer the
// one checkpointed. Rewriting the old paths to the new ones in the rollout (cli-relocation.md: it works with the
// rollout-only recipe, which is what a checkpoint holds: no SQLite whose byte offsets it would break) lets Codex
// resume it as if it had always been here.
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, unlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { readAgentFileSync, writeAgentFileSync } from "../agent-files.js";
import { noteRewrittenSync, REWRITTEN_MARKER } from "../rewritten-files.js";

/** Where a thread last ran: kept in the harness's state so a restore elsewhere can tell what moved. */
export interface ThreadPlace {
  cwd: string;
  home: string;
}

/**
 * The rollout files of `threadId` under CODEX_HOME `home` (normally one): regular files, in real directories.
 * What runs in the session can write there, and this walk runs (synchronously) at every resume: a link followed
 * would lead it anywhere on the host (a link to "/" walks the whole file system), a dangling one failed the
 * resume, and a FIFO named as a rollout would be read.
 */
export function rolloutsOf(home: string, threadId: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      const st = lstatSync(path, { throwIfNoEntry: false });
      if (st?.isDirectory()) walk(path);
      else if (st?.isFile() && name.startsWith("rollout-") && name.endsWith(`${threadId}.jsonl`))
        found.push(path);
    }
  };
  // CODEX_HOME and its sessions dir are the agent's to replace too (home is one level below the native dir).
  const sessions = join(home, "sessions");
  const real = (dir: string) => lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
  if (real(home) && real(sessions)) walk(sessions);
  return found;
}

/**
 * The cwd a rollout's session_meta line names: where the thread started, for state written before ThreadPlace.
 * `file` is under the native dir `root`, read only as a regular file through real directories from there.
 */
export function rolloutCwd(root: string, file: string): string | undefined {
  const text = readAgentFileSync(root, file) ?? "";
  const nl = text.indexOf("\n");
  try {
    const first = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as {
      type?: string;
      payload?: { cwd?: unknown };
    };
    return first.type === "session_meta" && typeof first.payload?.cwd === "string"
      ? first.payload.cwd
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Rewrites each moved path (`from` → `to`) in the rollouts; returns the files changed. A path is replaced only
 * where it ends (a separator, a quote, an escape, a tag or space follows), so `/a/work` never rewrites
 * `/a/workspace`. Codex's world_state lines fingerprint each context fragment the model was shown (the
 * permissions instructions name the cwd); a fingerprint left as it was would make Codex tell the model the
 * rewritten fragment again, so each is replaced by the rewritten fragment's.
 * `files` lie under `root` (the native dir), written back only through real directories from there.
 */
export function relocateRollouts(
  root: string,
  files: string[],
  moves: { from: string; to: string }[],
): string[] {
  const real = moves.filter((m) => m.from && m.from !== m.to);
  if (real.length === 0) return [];
  const rewrite = (text: string, spell: (path: string) => string) =>
    real.reduce(
      (out, { from, to }) =>
        out.replace(new RegExp(`${escapeRegExp(spell(from))}(?=${PATH_END}|$)`, "g"), () => spell(to)),
      text,
    );
  const changed: string[] = [];
  for (const file of files) {
    // Found as a regular file, but what runs in the session may have swapped a FIFO in since: never waited on.
    const before = readAgentFileSync(root, file);
    if (before === undefined) continue;
    let after = rewrite(before, inJson);
    if (after === before) continue;
    for (const [role, fragment] of fragments(before)) {
      const moved = rewrite(fragment, (path) => path);
      if (moved !== fragment)
        after = after.split(fragmentHash(role, fragment)).join(fragmentHash(role, moved));
    }
    // Noted first: a rollout rewritten but not noted would be stored as an append to checkpoints it no longer extends.
    noteRewrittenSync(root, REWRITTEN_MARKER, relative(root, file));
    writeAgentFileSync(root, file, after);
    changed.push(file);
  }
  return changed;
}

/** What may follow a whole path: a separator, quote, escape, tag, space or punctuation. */
const PATH_END = "[/\"\\\\<\\s`',;:)]";

/** Each context fragment (a `<tag>…</tag>` block, or a whole message text) of the rollout's messages. */
function fragments(rollout: string): [string, string][] {
  const found: [string, string][] = [];
  for (const line of rollout.split("\n")) {
    if (!line.includes('"response_item"')) continue;
    let item: { type?: string; payload?: { type?: string; role?: string; content?: { text?: unknown }[] } };
    try {
      item = JSON.parse(line);
    } catch {
      continue;
    }
    const { payload } = item;
    if (item.type !== "response_item" || payload?.type !== "message" || !payload.role) continue;
    for (const part of payload.content ?? []) {
      if (typeof part.text !== "string") continue;
      found.push([payload.role, part.text]);
      for (const block of part.text.matchAll(/<([a-z_ ]+)>[\s\S]*?<\/\1>/g))
        found.push([payload.role, block[0]]);
    }
  }
  return found;
}

/** Codex's fingerprint of a fragment shown to the model (WorldStateHash::from_fragment in codex-rs). */
export function fragmentHash(role: string, text: string): string {
  const hash = createHash("sha1").update("codex-world-state-fragment-v1\0");
  for (const value of [role, text]) {
    const bytes = Buffer.from(value.replaceAll("\r\n", "\n"), "utf8");
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(bytes.length));
    hash.update(length).update(bytes);
  }
  return hash.digest("hex");
}

const inJson = (text: string) => JSON.stringify(text).slice(1, -1);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Codex's databases that name a thread's rollout by its absolute path, or index it by byte offsets. */
const THREAD_DATABASES = /^(?:state|thread_history)_\d+\.sqlite(?:-wal|-shm|-journal)?$/;

/**
 * Removes Codex's thread databases from CODEX_HOME `home` when it was copied from `was` whole: they name the
 * rollout under the old home, and Codex would resume the thread from there and write its turns to it (to the old
 * copy, or to none), never to the rollout here. Codex rebuilds them from the rollouts under `sessions/`.
 * Returns the names removed. Only regular files directly in a real directory are touched.
 */
export function dropMovedDatabases(home: string, was: string | undefined): string[] {
  if (!was || was === home || lstatSync(home, { throwIfNoEntry: false })?.isDirectory() !== true) return [];
  const removed: string[] = [];
  for (const name of readdirSync(home)) {
    if (!THREAD_DATABASES.test(name) || !lstatSync(join(home, name), { throwIfNoEntry: false })?.isFile())
      continue;
    unlinkSync(join(home, name));
    removed.push(name);
  }
  return removed;
}

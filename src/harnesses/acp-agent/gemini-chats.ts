// Where the Gemini CLI keeps a session, and making it loadable from the current working directory. A chat is
// `<GEMINI_CLI_HOME>/.gemini/tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of its id>.jsonl`, where the
// slug is the project's short name in `projects.json` (path → slug), owned by the path in `<slug>/.project_root`.
// gemini-cli 0.61 looks for a session only under the slug of its cwd, so after a restore into another directory
// the slug must be handed to the new path; and a process that loads a session within the minute it was created
// opens a new chat file of the same name, whose first record resets the history (acp-agents.md), so the saved
// chat is renamed out of that name's way first. Chats that hold no messages are skipped by gemini's own lookup.
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ContainerUser } from "../../core/harness.js";
import { moveAgentFileSync, readAgentFileSync, writeAgentFileSync } from "../agent-files.js";

const SAVED_PREFIX = "session-brain-";

/**
 * Finds the session's chat, makes its slug the cwd's, and gives it a name no new chat takes. `root` is under the
 * native dir `native`, which the agent can write: Brain's writes go only through real directories from there.
 * `owner` is the user gemini runs as when not Brain's: what Brain writes or moves here is its, for it to update.
 */
export function placeGeminiChat(
  native: string,
  root: string,
  cwd: string,
  sessionId: string,
  owner?: ContainerUser,
): boolean {
  const tmp = join(root, "tmp");
  const short = sessionId.slice(0, 8);
  const found = findChat(native, tmp, short, sessionId);
  if (!found) return false;
  const project = resolve(cwd);
  const registryFile = join(root, "projects.json");
  const registry = readRegistry(native, registryFile);
  for (const [path, slug] of Object.entries(registry.projects)) {
    if (slug === found.slug || path === project) delete registry.projects[path];
  }
  registry.projects[project] = found.slug;
  writeAgentFileSync(native, registryFile, `${JSON.stringify(registry, null, 2)}\n`, undefined, owner);
  for (const base of [tmp, join(root, "history")]) {
    if (existsSync(join(base, found.slug)))
      writeAgentFileSync(native, join(base, found.slug, ".project_root"), project, undefined, owner);
  }
  const saved = `${SAVED_PREFIX}${short}.jsonl`;
  if (found.file !== saved)
    moveAgentFileSync(native, join(found.dir, found.file), join(found.dir, saved), owner);
  return true;
}

/** The chat is looked at in regular files only: gemini's shell can put a FIFO or a link at any name here. */
function findChat(native: string, tmp: string, short: string, sessionId: string) {
  let best: { slug: string; dir: string; file: string; size: number } | undefined;
  for (const slug of list(tmp)) {
    const dir = join(tmp, slug, "chats");
    for (const file of list(dir)) {
      if (!file.startsWith("session-") || !file.endsWith(`-${short}.jsonl`)) continue;
      const st = lstatSync(join(dir, file), { throwIfNoEntry: false });
      if (!st?.isFile() || !firstLine(native, join(dir, file)).includes(sessionId)) continue;
      if (!best || st.size > best.size) best = { slug, dir, file, size: st.size };
    }
  }
  return best;
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** A chat's first record names its session: read from the start of the file, never the whole of it. */
const FIRST_LINE_BYTES = 64 * 1024;

function firstLine(native: string, file: string): string {
  const text = readAgentFileSync(native, file, FIRST_LINE_BYTES) ?? "";
  const end = text.indexOf("\n");
  return end < 0 ? text : text.slice(0, end);
}

function readRegistry(native: string, file: string): { projects: Record<string, string> } {
  try {
    const parsed = JSON.parse(readAgentFileSync(native, file) ?? "");
    if (parsed && typeof parsed.projects === "object" && parsed.projects) return parsed;
  } catch {}
  return { projects: {} };
}

// What runs in a CLI session can put a FIFO at any name in its native dir. Brain looks at some of those files
// synchronously as a CLI starts (pi's newest session file, gemini's chats and project registry): a FIFO opened
// there would stop the daemon's event loop until something wrote to it. Such a name is passed over, or refused.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../testing/brain.js";
import { placeGeminiChat } from "./acp-agent/gemini-chats.js";
import { latestSessionFile, rebaseSession } from "./pi-cli/sessions.js";

const dirs: string[] = [];
const writers: ChildProcess[] = [];
afterEach(() => {
  for (const writer of writers.splice(0)) writer.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A FIFO at `file`, with a writer that lets each reader go at once (code that waits on it then fails this test
 * instead of hanging it) and counts the readers that opened it.
 */
function plantFifo(file: string): { readers(): number } {
  execFileSync("mkfifo", [file]);
  const counted = `${file}.readers`;
  writers.push(
    spawn("sh", ["-c", 'while :; do : > "$0"; echo >> "$1"; done', file, counted], { stdio: "ignore" }),
  );
  return { readers: () => (existsSync(counted) ? readFileSync(counted, "utf8").length : 0) };
}

function scratch(): string {
  const dir = tempDir("brain-planted-fifo-");
  dirs.push(dir);
  return dir;
}

describe("a FIFO planted in a CLI's native dir", () => {
  it("pi: is never taken for the newest session file, and is refused as one", () => {
    const native = scratch();
    const sessions = join(native, "pi", "sessions");
    mkdirSync(sessions, { recursive: true });
    const real = join(sessions, "2026-12-01T10-00-00-000Z_a.jsonl");
    writeFileSync(real, `${JSON.stringify({ type: "session", cwd: "/old" })}\n{"type":"message"}\n`);
    const fifo = join(sessions, "2099-01-01T00-00-00-000Z_z.jsonl");
    const planted = plantFifo(fifo);
    expect(latestSessionFile(sessions)).toBe(real);
    expect(rebaseSession(native, real, "/new")).toBe(true);
    expect(readFileSync(real, "utf8")).toBe(
      `${JSON.stringify({ type: "session", cwd: "/new" })}\n{"type":"message"}\n`,
    );
    expect(planted.readers()).toBe(0);
    expect(() => rebaseSession(native, fifo, "/new")).toThrow(/_z\.jsonl is not a regular file/);
  });

  it("gemini: is passed over as a chat, never opened, and refused as the project registry", () => {
    const native = scratch();
    const root = join(native, "gemini", ".gemini");
    const chats = join(root, "tmp", "work", "chats");
    mkdirSync(chats, { recursive: true });
    const id = "a2700244-85ea-4ca9-b845-9be8790a06d4";
    writeFileSync(join(chats, "session-2026-12-01T18-50-a2700244.jsonl"), `{"sessionId":"${id}"}\n`);
    const chat = plantFifo(join(chats, "session-2026-12-01T18-51-a2700244.jsonl"));
    expect(placeGeminiChat(native, root, "/new/work", id)).toBe(true);
    expect(chat.readers()).toBe(0);
    expect(readFileSync(join(chats, "session-brain-a2700244.jsonl"), "utf8")).toContain(id);
    rmSync(join(root, "projects.json"));
    plantFifo(join(root, "projects.json"));
    expect(() => placeGeminiChat(native, root, "/new/work", id)).toThrow(
      /projects\.json is not a regular file/,
    );
  });
});

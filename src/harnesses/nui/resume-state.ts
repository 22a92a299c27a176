// The one piece of native state a nui-family agent has on Brain's side: the `sessionId` its last `done` event
// named, sent back with the next run so the agent resumes its own conversation. It lives in the session's
// native dir, so checkpoints carry it and a restored or forked session resumes where the original was.
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { NativeFile } from "../../protocol/runner.js";

export const RESUME_FILE = "nui-session.json";

export class ResumeState {
  private current: string | undefined;

  private constructor(private readonly dir: string) {}

  /** Reads the saved id, if any: passive, no agent is contacted. */
  static async load(dir: string): Promise<ResumeState> {
    const state = new ResumeState(dir);
    try {
      const saved = JSON.parse(await readFile(join(dir, RESUME_FILE), "utf8")) as { sessionId?: unknown };
      if (typeof saved.sessionId === "string" && saved.sessionId) state.current = saved.sessionId;
    } catch {
      // no file yet (a new session), or one we cannot read: start without a resume id
    }
    return state;
  }

  get sessionId(): string | undefined {
    return this.current;
  }

  /** Saves a new id (tmp + rename, so a crash never leaves half a file). */
  async update(sessionId: string | undefined): Promise<void> {
    if (!sessionId || sessionId === this.current) return;
    this.current = sessionId;
    const file = join(this.dir, RESUME_FILE);
    await mkdir(this.dir, { recursive: true });
    await writeFile(`${file}.tmp`, `${JSON.stringify({ sessionId })}\n`);
    await rename(`${file}.tmp`, file);
  }

  /** The checkpoint: the resume file when there is one. */
  async files(): Promise<NativeFile[]> {
    if (!this.current) return [];
    const { size } = await stat(join(this.dir, RESUME_FILE));
    return [{ path: RESUME_FILE, size, append_only: false }];
  }
}

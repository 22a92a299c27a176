// The one piece of native state a nui-family agent has on Brain's side: the `sessionId` its last `done` event
// named, sent back with the next run so the agent resumes its own conversation. It lives in the session's
// native dir, so checkpoints carry it and a restored or forked session resumes where the original was.
//
// An agent that names no session keeps no conversation between runs (each run stands alone): the file then says
// so (`{"sessionId": null}`), so that a file that is absent after answered turns means lost, never stateless.
import { lstat, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { ExpectedHistory } from "../../core/harness.js";
import { missingHistory } from "../../core/native-check.js";
import type { NativeFile } from "../../protocol/runner.js";
import { readAgentFile, replaceAgentFile } from "../agent-files.js";

export const RESUME_FILE = "nui-session.json";

export class ResumeState {
  private current: string | undefined;
  /** The file exists: a run has ended in this native dir (or one it was copied from). */
  private saved = false;

  private constructor(private readonly dir: string) {}

  /** Reads the saved id, if any: passive, no agent is contacted. */
  static async load(dir: string): Promise<ResumeState> {
    const state = new ResumeState(dir);
    try {
      // Not followed when a link: the docker harness's container can write the native dir.
      const text = await readAgentFile(dir, RESUME_FILE);
      if (text === undefined) return state; // a new session
      const saved = JSON.parse(text) as { sessionId?: unknown };
      state.saved = true;
      if (typeof saved.sessionId === "string" && saved.sessionId) state.current = saved.sessionId;
    } catch {
      // one we cannot read (not JSON, a planted link): start without a resume id
    }
    return state;
  }

  get sessionId(): string | undefined {
    return this.current;
  }

  /**
   * After a run: saves a new id (tmp + rename, so a crash never leaves half a file); a run that named none
   * leaves a saved id as it is, and on a first run records that the agent named none.
   */
  async update(sessionId: string | undefined): Promise<void> {
    if (sessionId ? sessionId === this.current : this.saved) return;
    this.current = sessionId ?? undefined;
    await mkdir(this.dir, { recursive: true });
    await replaceAgentFile(this.dir, RESUME_FILE, `${JSON.stringify({ sessionId: sessionId ?? null })}\n`);
    this.saved = true;
  }

  /** The checkpoint: the resume file when there is one. */
  async files(): Promise<NativeFile[]> {
    if (!this.saved) return [];
    const { size } = await lstat(join(this.dir, RESUME_FILE));
    return [{ path: RESUME_FILE, size, append_only: false }];
  }

  /**
   * Verified resume: the conversation is the agent's, found by the id this file keeps. No file while the log has
   * answered turns means it was lost (a copy without it, a deleted file): the next run would start the agent
   * afresh. `agent` names the harness for the message.
   */
  missing(agent: string, expected: ExpectedHistory): string | undefined {
    if (this.saved) return undefined;
    return missingHistory(
      `the conversation id of ${agent}`,
      this.dir,
      [join(this.dir, RESUME_FILE)],
      expected,
    );
  }
}

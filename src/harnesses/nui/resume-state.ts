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

/**
 * Why a copy of `dir` is no conversation of its own (HarnessFactory.agentSide), for a family that runs agents of
 * either kind (docker): unless the resume file says the agent keeps its state in the native dir, its conversation
 * is on its side, and a new container asked to resume the parent's id would start without any history.
 */
export async function agentSideIn(dir: string): Promise<string | undefined> {
  try {
    const text = await readAgentFile(dir, RESUME_FILE);
    if (
      text !== undefined &&
      (JSON.parse(text) as { stateInNativeDir?: unknown }).stateInNativeDir === true
    ) {
      return undefined;
    }
  } catch {
    // one we cannot read says nothing: the log is the conversation of record
  }
  return "the agent did not say it keeps its state in the native dir (its /info offers no checkpoint and verify): a copy holds only the id it resumes it by";
}

export class ResumeState {
  private current: string | undefined;
  /** The file exists: a run has ended in this native dir (or one it was copied from). */
  private saved = false;
  /** What the file says of where the agent keeps its state, as it was read. */
  private savedInNativeDir: unknown;

  /** `stateInNativeDir`: whether this run's agent keeps its state in the dir, recorded with the id (agentSideIn). */
  private constructor(
    private readonly dir: string,
    private readonly stateInNativeDir?: boolean,
  ) {}

  /** Reads the saved id, if any: passive, no agent is contacted. */
  static async load(dir: string, stateInNativeDir?: boolean): Promise<ResumeState> {
    const state = new ResumeState(dir, stateInNativeDir);
    try {
      // Not followed when a link: the docker harness's container can write the native dir.
      const text = await readAgentFile(dir, RESUME_FILE);
      if (text === undefined) return state; // a new session
      const saved = JSON.parse(text) as { sessionId?: unknown; stateInNativeDir?: unknown };
      state.saved = true;
      state.savedInNativeDir = saved.stateInNativeDir;
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
    const told = this.stateInNativeDir === undefined || this.stateInNativeDir === this.savedInNativeDir;
    if ((sessionId ? sessionId === this.current : this.saved) && told) return;
    if (sessionId) this.current = sessionId;
    else if (!this.saved) this.current = undefined;
    const where = this.stateInNativeDir === undefined ? {} : { stateInNativeDir: this.stateInNativeDir };
    const content = { sessionId: this.current ?? null, ...where };
    await mkdir(this.dir, { recursive: true });
    await replaceAgentFile(this.dir, RESUME_FILE, `${JSON.stringify(content)}\n`);
    this.saved = true;
    this.savedInNativeDir = this.stateInNativeDir;
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

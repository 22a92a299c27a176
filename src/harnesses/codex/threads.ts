// The Codex thread a native dir holds: Brain's record of it (the state file), opening it on a fresh app-server
// (`thread/resume` with the current cwd, after moving a restored rollout's paths here, or `thread/start`), and
// the check that its rollout holds the history Brain's log says it had.
import { dirname, join } from "node:path";
import { type ExpectedHistory, HarnessError } from "../../core/harness.js";
import { missingHistory } from "../../core/native-check.js";
import { listNativeFiles } from "../cli/files.js";
import type { ThreadResumeParams } from "./generated/v2/ThreadResumeParams.js";
import type { ThreadStartParams } from "./generated/v2/ThreadStartParams.js";
import { relocateRollouts, rolloutCwd, rolloutsOf, type ThreadPlace } from "./relocate.js";
import { type RpcConnection, RpcError } from "./rpc.js";

/** What the state file records. */
export interface CodexState {
  thread_id: string;
  /** Where the thread last ran (absent in state written before it was kept). */
  place?: ThreadPlace;
}

/** Codex asks before anything it does not consider safe; Brain's policy then decides. */
const APPROVAL_POLICY = "untrusted" as const;
const SANDBOX = "workspace-write" as const;

export interface ThreadOpening {
  rpc: RpcConnection;
  /** The state file's record, if any. */
  state: CodexState | undefined;
  /** Where the thread runs now. */
  place: ThreadPlace;
  systemPrompt: string | undefined;
  startMs: number;
  label: string;
  warn: (message: string) => void;
}

/** Resumes the thread the state names, with the current cwd; starts one when there is none yet. */
export async function openThread(opening: ThreadOpening): Promise<CodexState> {
  const { rpc, state, place, systemPrompt, startMs } = opening;
  const instructions = systemPrompt ? { developerInstructions: systemPrompt } : {};
  const common = { cwd: place.cwd, approvalPolicy: APPROVAL_POLICY, sandbox: SANDBOX, ...instructions };
  if (state?.thread_id) {
    relocate(state, place, opening.warn);
    const params: ThreadResumeParams = { threadId: state.thread_id, excludeTurns: true, ...common };
    try {
      await rpc.request("thread/resume", params, startMs);
      return { thread_id: state.thread_id, place };
    } catch (err) {
      // A thread checkpointed before its first turn has no rollout yet: there is nothing to resume.
      if (!(err instanceof RpcError) || !/no rollout found/i.test(err.message)) throw err;
      opening.warn(`thread ${state.thread_id} had no saved history; started a new thread`);
    }
  }
  const params: ThreadStartParams = common;
  const result = await rpc.request("thread/start", params, startMs);
  const threadId = result?.thread?.id;
  if (typeof threadId !== "string")
    throw new HarnessError("brain_error", `${opening.label}: thread/start returned no thread id`);
  return { thread_id: threadId, place };
}

/** A thread restored from elsewhere: its rollout's paths are made this session's (relocate.ts says why). */
function relocate(state: CodexState, place: ThreadPlace, warn: (message: string) => void): void {
  const files = rolloutsOf(place.home, state.thread_id);
  const root = dirname(place.home);
  const was = state.place ?? { cwd: files[0] ? rolloutCwd(root, files[0]) : undefined, home: undefined };
  const moves = [
    { from: was.home ?? "", to: place.home },
    { from: was.cwd ?? "", to: place.cwd },
  ];
  // The native dir: the rollouts are under `<native>/codex`, which an agent could swap for a link.
  if (relocateRollouts(root, files, moves).length > 0)
    warn(`thread ${state.thread_id} moved here; its history now names ${place.cwd}`);
}

/**
 * The thread's rollout (the only file `thread/resume` rebuilds its history from), under `sessions` (relative
 * to the native dir `dir`), checked against what Brain's log expects.
 */
export async function missingThreadHistory(
  dir: string,
  sessions: string,
  state: CodexState | undefined,
  stateFile: string,
  expected: ExpectedHistory,
): Promise<string | undefined> {
  const id = state?.thread_id;
  const rollouts = id
    ? await listNativeFiles(dir, sessions, {
        include: (path) => path.endsWith(`-${id}.jsonl`),
        appendOnly: () => true,
      })
    : [];
  const files = rollouts.map((f) => join(dir, f.path));
  const what = id ? `the Codex rollout of thread ${id}` : `the Codex thread (${stateFile} names none)`;
  return missingHistory(what, dir, files, expected);
}

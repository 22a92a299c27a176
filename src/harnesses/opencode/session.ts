// The opencode session a native dir holds: Brain's record of it (the state file), finding or creating it on a
// fresh server, and the check that opencode's files hold the history Brain's log says it had.
import { type ExpectedHistory, HarnessError } from "../../core/harness.js";
import { missingHistory } from "../../core/native-check.js";
import { OpencodeHttpError, type OpencodeServer } from "./server.js";

/** What the state file records. */
export interface OpencodeState {
  session_id: string;
}

/** The session the state names, when opencode's database has it; else a new one titled `title`. */
export async function openSession(
  server: OpencodeServer,
  state: OpencodeState | undefined,
  title: string,
  label: string,
  warn: (message: string) => void,
): Promise<string> {
  if (state?.session_id) {
    try {
      await server.call("GET", `/session/${state.session_id}`);
      return state.session_id;
    } catch (err) {
      // Only opencode's "not found" means the session is gone. Any other failure (a busy database, a crash)
      // fails the start: a new session would replace the recorded one, and its conversation with it.
      if (!(err instanceof OpencodeHttpError) || err.status !== 404) throw err;
      warn(`session ${state.session_id} is not in opencode's database; started a new one`);
    }
  }
  const created = (await server.call("POST", "/session", { title })) as { id?: string };
  if (typeof created?.id !== "string")
    throw new HarnessError("brain_error", `${label}: POST /session returned no id`);
  return created.id;
}

/**
 * opencode's database `db` (and its write-ahead log, where a running server keeps recent turns), or the export
 * a restore imports. Its text is stored as JSON in the rows, so the prompt is found in the raw pages.
 */
export function missingSessionHistory(
  dir: string,
  files: { db: string; exported: string; stateFile: string },
  state: OpencodeState | undefined,
  expected: ExpectedHistory,
): string | undefined {
  if (!state?.session_id) {
    return missingHistory(`the opencode session (${files.stateFile} names none)`, dir, [], expected);
  }
  const { db, exported } = files;
  return missingHistory(
    `the opencode session ${state.session_id}`,
    dir,
    [db, `${db}-wal`, exported],
    expected,
  );
}

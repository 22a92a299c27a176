// Whether a runner's native dir still holds the conversation Brain's log says it had (Harness.verify).
import { join } from "node:path";
import type { ExpectedHistory } from "../../core/harness.js";
import { missingHistory, missingKeptHistory } from "../../core/native-check.js";
import { listNativeFiles } from "../cli/files.js";

/**
 * A runner's native format is its own, so Brain looks for the last answered prompt, as text or any JSON escape of
 * it, in every file the runner keeps in its native dir: the seed gives the runner the whole dir and reserves no
 * part of it (Brain never makes a runner's working tree there, unlike the CLI families' `work`). A runner that kept
 * nothing there, or other text, lost the conversation: the turn fails rather than start the model afresh.
 */
export async function missingRunnerHistory(
  runnerName: string,
  dir: string,
  expected: ExpectedHistory,
): Promise<string | undefined> {
  const kept = await listNativeFiles(dir, "", { appendOnly: () => false });
  const what = `the native state of runner "${runnerName}"`;
  const files = kept.map((f) => join(dir, f.path));
  // A runner may record a turn only as it ends: one that crashed mid-turn kept nothing of that failed turn,
  // and must hold only the turns before it.
  return missingKeptHistory(expected, (wanted) => missingIn(what, dir, files, wanted));
}

function missingIn(
  what: string,
  dir: string,
  files: string[],
  expected: ExpectedHistory,
): string | undefined {
  const missing = missingHistory(what, dir, files, expected);
  if (!missing || files.length === 0) return missing;
  // Files that hold the conversation in a form other than text (compressed, encrypted, a database) look lost.
  return `${missing}; a runner that keeps its conversation in a form Brain cannot read as text sets "verify_history": false in its harnesses entry`;
}

// Checks that a harness's native state holds the conversation Brain's log says it had: a reopened harness whose
// transcript is gone (deleted, never copied, a different session id) would otherwise start the model afresh and
// nobody would know. Families call this from Harness.verify with the files that hold their conversation.
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";

/** What the log says the native state must hold: the last prompt the model answered. */
export interface ExpectedHistory {
  lastPrompt: string;
  /** How many answered turns the log has (for the message). */
  turns?: number;
  /**
   * The last answered prompt of a turn that did not fail (absent when every answered turn failed): what a
   * harness that records a turn only as it ends (a runner that crashed mid-turn) holds at least.
   */
  lastKept?: string;
}

/** A transcript stores a prompt as a JSON string: this much of its start, escaped, is what is looked for. */
const NEEDLE_CHARS = 120;

function needles(prompt: string): Buffer[] {
  // The log holds a secret in a prompt as `[redacted:NAME]` while the native file holds the value: look only for
  // what comes before the first one.
  const known = prompt.split("[redacted:")[0]!;
  const head = [...known].slice(0, NEEDLE_CHARS).join("");
  const escaped = JSON.stringify(head).slice(1, -1);
  // Writers that escape every non-ASCII character (Python's json.dumps, a runner on the Python SDK) store
  // "é" as "\u00e9".
  const ascii = escaped.replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return [...new Set([escaped, ascii, head])].filter((s) => s !== "").map((s) => Buffer.from(s, "utf8"));
}

function shown(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/**
 * Undefined when one of `files` (absolute paths) holds the last prompt; else what is missing, naming `what` (the
 * family's word for its transcript) and the files relative to `dir`. A prompt the log holds but whose text is
 * empty cannot be looked for: the file existing is enough then.
 */
export function missingHistory(
  what: string,
  dir: string,
  files: readonly string[],
  expected: ExpectedHistory,
): string | undefined {
  const present = files.filter((f) => existsSync(f));
  const turns = expected.turns
    ? `${expected.turns} answered turn${expected.turns === 1 ? "" : "s"}`
    : "turns";
  if (present.length === 0) {
    const where = files.length > 0 ? ` (${files.map((f) => relative(dir, f)).join(", ")})` : "";
    return `${what}${where} is missing, but Brain's log has ${turns} it should hold (last prompt ${shown(expected.lastPrompt)})`;
  }
  const wanted = needles(expected.lastPrompt);
  if (wanted.length === 0) return undefined;
  for (const file of present) {
    const bytes = readFileSync(file);
    if (wanted.some((needle) => bytes.lastIndexOf(needle) >= 0)) return undefined;
  }
  const names = present.map((f) => relative(dir, f)).join(", ");
  return `${what} (${names}) does not hold the last prompt Brain's log says the model answered (${shown(expected.lastPrompt)})`;
}

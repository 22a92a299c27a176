// Checks that a harness's native state holds the conversation Brain's log says it had: a reopened harness whose
// transcript is gone (deleted, never copied, a different session id) would otherwise start the model afresh and
// nobody would know. Families call this from Harness.verify with the files that hold their conversation.
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { relative } from "node:path";
import { fileKind } from "./checkpoints/plan.js";

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

/** JSON's two-character escapes; every character may also be written `\uXXXX`. */
const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "/": "\\/",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** `\uXXXX` for each UTF-16 unit of `c` (a surrogate pair past U+FFFF), hex digits in either case. */
function unitEscapes(c: string): string {
  let out = "";
  for (let i = 0; i < c.length; i++) {
    const hex = c.charCodeAt(i).toString(16).padStart(4, "0");
    out += `\\\\u${hex.replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`)}`;
  }
  return out;
}

interface Needle {
  /** The spellings nearly every writer uses (raw text, minimal JSON escapes), found fast in the bytes. */
  common: Buffer[];
  /** Any spelling JSON allows, character by character: what else a writer may have chosen. */
  anyEscape: RegExp;
}

function needle(prompt: string): Needle | undefined {
  // The log holds a secret in a prompt as `[redacted:NAME]` while the native file holds the value: look only for
  // what comes before the first one.
  const known = prompt.split("[redacted:")[0]!;
  const chars = [...known].slice(0, NEEDLE_CHARS);
  if (chars.length === 0) return undefined;
  const head = chars.join("");
  const escaped = JSON.stringify(head).slice(1, -1);
  // Writers escape more than they must, each its own way: Python's json.dumps every non-ASCII character
  // ("\u00e9"), Go's encoding/json and Gson `<`, `>`, `&` ("\u003c"), U+2028 and U+2029, PHP "/" as "\/", .NET
  // in upper-case hex ("\u003C"). Each character is matched as itself or as any escape JSON has for it.
  const anyEscape = chars
    .map((c) => {
      const ways = [literal(c), unitEscapes(c)];
      const short = SHORT_ESCAPES[c];
      if (short) ways.push(literal(short));
      return `(?:${ways.join("|")})`;
    })
    .join("");
  return {
    common: [...new Set([escaped, head])].map((s) => Buffer.from(s, "utf8")),
    anyEscape: new RegExp(anyEscape),
  };
}

function holds(bytes: Buffer, wanted: Needle): boolean {
  return (
    wanted.common.some((b) => bytes.lastIndexOf(b) >= 0) || wanted.anyEscape.test(bytes.toString("utf8"))
  );
}

/** A file is searched this much at a time: a transcript can be as large as its agent makes it. */
const CHUNK = 1 << 20;
/** Carried from one chunk into the next: the longest spelling of a needle (two `\uXXXX` a character), and more. */
const OVERLAP = NEEDLE_CHARS * 12 + 16;

/**
 * Whether `file` holds the needle, or what it is when it is not a regular file. The agent can write where its
 * transcript is: a FIFO there would block the open (and the daemon's event loop with it, this being synchronous)
 * until something wrote to it, and a link could lead to a device that never ends. Neither is followed or waited on.
 */
function fileHolds(file: string, wanted: Needle): boolean | { kind: string } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return { kind: "a symbolic link" };
    if (code === "ENOENT") return false;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { kind: fileKind(st) };
    const buf = Buffer.allocUnsafe(CHUNK + OVERLAP);
    let kept = 0;
    for (;;) {
      const read = readSync(fd, buf, kept, CHUNK, null);
      if (read === 0) return false;
      const window = buf.subarray(0, kept + read);
      if (holds(window, wanted)) return true;
      kept = Math.min(OVERLAP, window.length);
      buf.copy(buf, 0, window.length - kept, window.length);
    }
  } finally {
    closeSync(fd);
  }
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
  const wanted = needle(expected.lastPrompt);
  if (!wanted) return undefined;
  const odd: string[] = [];
  for (const file of present) {
    const found = fileHolds(file, wanted);
    if (found === true) return undefined;
    if (found !== false) odd.push(`${relative(dir, file)} is ${found.kind}, not a regular file`);
  }
  const names = present.map((f) => relative(dir, f)).join(", ");
  const why = odd.length > 0 ? `; ${odd.join("; ")}` : "";
  return `${what} (${names}) does not hold the last prompt Brain's log says the model answered (${shown(expected.lastPrompt)})${why}`;
}

/**
 * missingHistory for an agent that records a turn only as it ends, or (pi) writes nothing before its first answer
 * ends: a turn that failed mid-way (its program killed) may be absent, the turns kept before it may not. `check` is
 * the lookup (missingHistory, or one that adds a hint to what it finds missing).
 */
export function missingKeptHistory(
  expected: ExpectedHistory,
  check: (expected: ExpectedHistory) => string | undefined,
): string | undefined {
  const missing = check(expected);
  if (!missing || expected.lastKept === expected.lastPrompt) return missing;
  if (expected.lastKept === undefined) return undefined;
  return check({ ...expected, lastPrompt: expected.lastKept }) && missing;
}

// @ts-check
// The transcript's building blocks: elements made from text only (never HTML, so what an agent says stays text),
// tool arguments cut or shown in full, usage summed, and who answered a request.

/**
 * Terminal control in text an agent or a tool wrote (a CLI tool run in a terminal colours its output, sets the
 * window's title, rings the bell): a page shows no colour for it, only the sequences' printable halves ("[31m")
 * around the text. Escape sequences (CSI, OSC, the two-character ones) and C0/C1 control characters go; a line end
 * of CR LF or CR is a line end. An OSC without its end loses only its first two characters, not all that follows.
 */
const TERMINAL_CONTROL =
  /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b[ -/]*[0-~]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;
export const plain = (text) => text.replace(TERMINAL_CONTROL, "").replace(/\r\n?/g, "\n");

/**
 * How much of a streamed text's end may be the start of an escape sequence or a CR LF the next piece ends: held
 * back until it does, since cut in two neither half is recognised.
 */
export const UNFINISHED_CONTROL =
  /(?:\x1b(?:\][^\x07\x1b]{0,256}\x1b?|\[[0-?]*[ -/]*|[ -/]*)?|\x9b[0-?]*[ -/]*|\r)$/;

/** An element; its text children are shown as text (never HTML), without terminal control (plain). */
export const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children)
    if (child !== undefined && child !== null) node.append(typeof child === "string" ? plain(child) : child);
  return node;
};

export const formatted = (value) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));

/** Tool arguments and results in the transcript: cut at 4000 characters, so a huge one cannot stall the page. */
export const short = (value) => {
  const text = plain(formatted(value));
  return text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
};

// A blank run inside a line: enough of them wraps to screens of nothing, and whatever follows goes unseen.
const BLANK_RUN = /(?<=\S)[^\S\n]{32,}/g;
const jsonEscape = (chars) =>
  Array.from(
    { length: chars.length },
    (_, i) => `\\u${chars.charCodeAt(i).toString(16).padStart(4, "0")}`,
  ).join("");

/**
 * What a permission request asks to run, in full: Allow approves all of it, so none of it may be cut or hidden.
 * Invisible format and control characters (zero-width, bidi overrides, escape) are shown as the JSON escapes they are, and long
 * blank runs as a marked span saying how long they are (the text itself stays in the card, exactly).
 */
export function fullArguments(args) {
  // Control characters too (an escape sequence, a CR that would hide what came before it in a terminal).
  const text = formatted(args).replace(/[\p{Cf}\x00-\x08\x0b-\x1f\x7f-\x9f]+/gu, jsonEscape);
  const pre = el("pre", { class: "request-args" });
  let at = 0;
  for (const run of text.matchAll(BLANK_RUN)) {
    const blanks = run[0].length;
    pre.append(
      text.slice(at, run.index),
      el(
        "span",
        { class: "blank-run", title: `${blanks} blank characters`, "data-length": String(blanks) },
        run[0],
      ),
    );
    at = run.index + blanks;
  }
  pre.append(text.slice(at));
  return [el("div", { class: "label" }, `arguments, ${text.length} characters:`), pre];
}

/** Two messages' usage together; cache reads and cost only when one of them has them. */
export function sumUsage(a, b) {
  if (!a) return b;
  const add = (x, y) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cache_read: add(a.cache_read, b.cache_read),
    cost: add(a.cost, b.cost),
  };
}

/**
 * Who gave an answer, when a client did (the token's name, never the token): a card answered elsewhere says so.
 * `me`: this tab's X-Brain-Client.
 */
export function answeredBy(who, me) {
  if (!who) return "";
  if (who.client && who.client === me) return " (by you)";
  return ` (by ${who.token ?? `tenant ${who.tenant}`}${who.client ? `, client ${who.client}` : ""})`;
}

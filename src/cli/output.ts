// How the CLI shows a session's events: text as it streams, tool calls and failures on stderr, or one JSON
// event per line. Text never carries a control character to the terminal.
import { unstreamedMessages } from "../core/message-text.js";
import type { SessionEvent } from "../protocol/events.js";

export type Printer = (events: SessionEvent[]) => void;

// C0 controls but tab and line feed, a carriage return not before a line feed, DEL and the C1 range.
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/g;

/**
 * Text of the session as the terminal is to show it: its control characters written as \u escapes. Raw, they are
 * commands to the terminal (OSC 52 sets the clipboard, CSI moves the cursor and erases lines, a lone CR writes
 * over the line), and any text an agent read or another client sent may hold them.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// What JSON.stringify leaves raw: it escapes C0 controls only. They can only be inside the line's strings.
const UNESCAPED_CONTROL = /[\x7f-\x9f\u2028\u2029]/g;

/**
 * One event per line, its DEL, C1 controls and line and paragraph separators written as \u escapes too (the same
 * JSON value): --json lines go to terminals as well as to programs, a raw U+009B is a CSI to a terminal that takes
 * C1 controls in UTF-8, and a reader that splits lines as Python's splitlines() does broke a line at U+2028.
 */
export function jsonPrinter(out: NodeJS.WritableStream = process.stdout): Printer {
  return (events) => {
    const lines = events.map((event) => `${JSON.stringify(event)}\n`).join("");
    out.write(lines.replace(UNESCAPED_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
  };
}

export function textPrinter(
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Printer {
  let midLine = false;
  const unstreamed = unstreamedMessages();
  const write = (text: string) => {
    out.write(terminalText(text));
    midLine = !text.endsWith("\n");
  };
  const note = (line: string) => {
    if (midLine) out.write("\n");
    midLine = false;
    err.write(`${terminalText(line)}\n`);
  };
  return (events) => {
    for (const event of events) {
      // A message that streamed nothing (a compacted log's) is printed whole.
      const whole = unstreamed(event);
      if (whole !== undefined) write(whole);
      switch (event.type) {
        case "assistant.delta":
          write(event.data.text);
          break;
        case "tool.call":
          note(`[tool ${event.data.name} ${JSON.stringify(event.data.arguments)}]`);
          break;
        case "tool.result":
          note(
            `[tool result${event.data.is_error ? " (error)" : ""}: ${event.data.content.map((c) => c.text).join("")}]`,
          );
          break;
        case "harness.warning":
          note(`[warning: ${event.data.message}]`);
          break;
        case "turn.settled":
          if (midLine) out.write("\n");
          midLine = false;
          if (event.data.status !== "completed") {
            const why = event.data.error ? `: ${event.data.error.code}: ${event.data.error.message}` : "";
            err.write(`${terminalText(`[turn ${event.data.status}${why}]`)}\n`);
          }
          break;
      }
    }
  };
}

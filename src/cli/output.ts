// How the CLI shows a session's events: text as it streams, tool calls and failures on stderr, or one JSON
// event per line.
import { unstreamedMessages } from "../core/message-text.js";
import type { SessionEvent } from "../protocol/events.js";

export type Printer = (events: SessionEvent[]) => void;

export function jsonPrinter(out: NodeJS.WritableStream = process.stdout): Printer {
  return (events) => {
    out.write(events.map((event) => `${JSON.stringify(event)}\n`).join(""));
  };
}

export function textPrinter(
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Printer {
  let midLine = false;
  const unstreamed = unstreamedMessages();
  const write = (text: string) => {
    out.write(text);
    midLine = !text.endsWith("\n");
  };
  const note = (line: string) => {
    if (midLine) out.write("\n");
    midLine = false;
    err.write(`${line}\n`);
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
            err.write(`[turn ${event.data.status}${why}]\n`);
          }
          break;
      }
    }
  };
}

// The offline demo runner: echoes each prompt back as deltas and a message, numbering turns from its own
// transcript (so a restored session visibly continues where it was), and calls a bound tool when the prompt
// asks: `echo: TEXT` calls the `echo` tool, `call the tool "NAME" with {JSON}` calls any tool. No model, no key.
// Written on the runner SDK (sdk/ts): it is the SDK's smallest complete example.
//
// Options (session config.options): `delay_ms` between streamed words (a slow stream for interrupt demos).
import { appendFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  type Attachment,
  type NativeFile,
  type OpenParams,
  serve,
  type ToolResult,
  type Turn,
  TurnInterrupted,
} from "../../sdk/ts/index.js";
import { sleep } from "../../src/core/sleep.js";
import { encodeLine } from "../../src/protocol/ndjson.js";

const TRANSCRIPT = "echo.jsonl";

class EchoSession implements Attachment {
  readonly metadata: Record<string, unknown>;
  private readonly delayMs: number;
  private turns: number;
  /** The transcript ends in a line cut short (a write that ran out of disk, or a kill mid-write). */
  private torn: boolean;

  constructor(private readonly params: OpenParams) {
    this.metadata = { tools: params.tools.map((t) => t.name) };
    this.delayMs = Number(params.config.options?.delay_ms ?? 0);
    // Passive open: read the transcript, nothing else.
    const path = join(params.dir, TRANSCRIPT);
    const text = existsSync(path) ? readFileSync(path, "utf8") : "";
    this.torn = text !== "" && !text.endsWith("\n");
    // A line cut short is left out, here and in every later count: it never became a whole entry.
    this.turns = text.split("\n").filter((line) => roleOf(line) === "user").length;
  }

  async prompt(text: string, turn: Turn) {
    this.turns += 1;
    this.record({ role: "user", text });
    let reply = `echo #${this.turns}: ${text}`;
    const wanted = wantedToolCall(text);
    if (wanted) {
      const result = await untilInterrupted(turn.callTool(wanted.name, wanted.arguments));
      if (result) {
        const out = result.content.map((c) => c.text).join("");
        this.record({ role: "tool", name: wanted.name, is_error: result.is_error, text: out });
        reply += `\n${wanted.name} ${result.is_error ? "failed" : "returned"}: ${out}`;
      }
    }
    let said = "";
    for (const word of reply.split(/(?<= )/)) {
      if (turn.signal.aborted) break;
      // Steering (queued by the SDK, as this runner has no steer handler) shows up before the next word.
      for (const steer of turn.takeSteering()) {
        said += `[steered: ${steer}] `;
        turn.delta(`[steered: ${steer}] `);
      }
      said += word;
      turn.delta(word);
      await sleep(this.delayMs, turn.signal);
    }
    const interrupted = turn.signal.aborted;
    this.record({ role: "assistant", text: said, ...(interrupted ? { interrupted: true } : {}) });
    const usage = { input: text.length, output: said.length };
    turn.message({ text: said, usage, stop_reason: interrupted ? "interrupted" : "stop" });
    return { interrupted };
  }

  checkpoint(): NativeFile[] {
    const path = join(this.params.dir, TRANSCRIPT);
    const size = existsSync(path) ? statSync(path).size : 0;
    return size ? [{ path: TRANSCRIPT, size, append_only: true }] : [];
  }

  private record(entry: Record<string, unknown>): void {
    // After a line cut short, a line break first: the next entry must not be glued onto it. The file is only ever
    // appended to (a checkpoint copies it as append-only), so the cut line stays, and reads skip it.
    const line = (this.torn ? "\n" : "") + encodeLine(entry);
    this.torn = true;
    appendFileSync(join(this.params.dir, TRANSCRIPT), line);
    this.torn = false;
  }
}

/** The role of one transcript line, or undefined for an empty one or one cut short. */
function roleOf(line: string): string | undefined {
  try {
    return line ? (JSON.parse(line) as { role?: string }).role : undefined;
  } catch {
    return undefined;
  }
}

function wantedToolCall(text: string): { name: string; arguments: Record<string, unknown> } | undefined {
  const echo = /^echo:\s*([\s\S]*)$/.exec(text);
  if (echo) return { name: "echo", arguments: { value: echo[1] } };
  const any = /call the tool "([^"]+)" with (\{[\s\S]*\})/.exec(text);
  if (any) return { name: any[1]!, arguments: JSON.parse(any[2]!) as Record<string, unknown> };
  return undefined;
}

/** The tool's result, or undefined when the turn was interrupted while it waited. */
async function untilInterrupted(call: Promise<ToolResult>): Promise<ToolResult | undefined> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof TurnInterrupted) return undefined;
    throw err;
  }
}

serve({ open: (params) => new EchoSession(params) });

// The offline demo runner: echoes each prompt back as deltas and a message, numbering turns from its own
// transcript (so a restored session visibly continues where it was), and calls a bound tool when the prompt
// asks: `echo: TEXT` calls the `echo` tool, `call the tool "NAME" with {JSON}` calls any tool. No model, no key.
//
// Options (session config.options): `delay_ms` between streamed words (a slow stream for interrupt demos).
import { appendFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { decodeBrainFrame } from "../../src/protocol/frames.js";
import { encodeLine, LineSplitter } from "../../src/protocol/ndjson.js";
import type { BrainToRunnerFrame, OpenParams, ToolResult } from "../../src/protocol/runner.js";

const TRANSCRIPT = "echo.jsonl";

interface Attachment {
  dir: string;
  delayMs: number;
  tools: Set<string>;
  turns: number;
  running?: { turn: string; aborted: boolean; steers: string[]; wake?: () => void };
}

const attachments = new Map<string, Attachment>();
const toolWaits = new Map<string, (result: ToolResult | undefined) => void>();
let nextCallId = 1;

function send(frame: unknown): void {
  process.stdout.write(encodeLine(frame));
}

function record(a: Attachment, entry: Record<string, unknown>): void {
  appendFileSync(join(a.dir, TRANSCRIPT), encodeLine(entry));
}

function open(params: OpenParams): Attachment {
  const path = join(params.dir, TRANSCRIPT);
  // Passive open: read the transcript, nothing else.
  const lines = existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
  const turns = lines.filter((line) => (JSON.parse(line) as { role: string }).role === "user").length;
  const delay = Number(params.config.options?.delay_ms ?? 0);
  return { dir: params.dir, delayMs: delay, tools: new Set(params.tools.map((t) => t.name)), turns };
}

function wantedToolCall(text: string): { name: string; arguments: Record<string, unknown> } | undefined {
  const echo = /^echo:\s*([\s\S]*)$/.exec(text);
  if (echo) return { name: "echo", arguments: { value: echo[1] } };
  const any = /call the tool "([^"]+)" with (\{[\s\S]*\})/.exec(text);
  if (any) return { name: any[1]!, arguments: JSON.parse(any[2]!) as Record<string, unknown> };
  return undefined;
}

async function sleep(a: Attachment, ms: number): Promise<void> {
  if (ms <= 0 || !a.running) return;
  const running = a.running;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    running.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

/** Resolves with the tool's result, or undefined when the turn is interrupted while waiting. */
function callTool(
  a: Attachment,
  attachment: string,
  turn: string,
  name: string,
  args: Record<string, unknown>,
) {
  const id = `call-${nextCallId++}`;
  send({ attachment, turn, id, method: "tool.call", params: { id: `tool-${id}`, name, arguments: args } });
  return new Promise<ToolResult | undefined>((resolve) => {
    toolWaits.set(id, resolve);
    if (a.running) a.running.wake = () => resolve(undefined);
  });
}

async function prompt(attachment: string, a: Attachment, turn: string, text: string): Promise<boolean> {
  a.turns += 1;
  a.running = { turn, aborted: false, steers: [] };
  const running = a.running;
  record(a, { role: "user", text });
  let reply = `echo #${a.turns}: ${text}`;
  const wanted = wantedToolCall(text);
  if (wanted) {
    const result = await callTool(a, attachment, turn, wanted.name, wanted.arguments);
    if (result) {
      const out = result.content.map((c) => c.text).join("");
      record(a, { role: "tool", name: wanted.name, is_error: result.is_error, text: out });
      reply += `\n${wanted.name} ${result.is_error ? "failed" : "returned"}: ${out}`;
    }
  }
  let said = "";
  for (const word of reply.split(/(?<= )/)) {
    if (running.aborted) break;
    while (running.steers.length) {
      const steer = `[steered: ${running.steers.shift()}] `;
      said += steer;
      send({ attachment, turn, event: "assistant.delta", data: { text: steer } });
    }
    said += word;
    send({ attachment, turn, event: "assistant.delta", data: { text: word } });
    await sleep(a, a.delayMs);
  }
  record(a, { role: "assistant", text: said, ...(running.aborted ? { interrupted: true } : {}) });
  const usage = { input: text.length, output: said.length };
  const stop = running.aborted ? "interrupted" : "stop";
  send({ attachment, turn, event: "assistant.message", data: { text: said, usage, stop_reason: stop } });
  a.running = undefined;
  return running.aborted;
}

async function handle(frame: BrainToRunnerFrame): Promise<void> {
  if (!("method" in frame)) {
    toolWaits.get(frame.id)?.(frame.result);
    toolWaits.delete(frame.id);
    return;
  }
  const { attachment, id } = frame;
  const reply = (result: unknown, turn?: string) =>
    send({ attachment, ...(turn ? { turn } : {}), id, result });
  const a = attachments.get(attachment);
  if (frame.method === "open") {
    attachments.set(attachment, open(frame.params));
    return reply({ tools: frame.params.tools.map((t) => t.name) });
  }
  if (!a) {
    const turn = "turn" in frame ? { turn: frame.turn } : {};
    const error = { code: "brain_error", message: `attachment ${attachment} was never opened` };
    return send({ attachment, ...turn, id, error });
  }
  switch (frame.method) {
    case "prompt":
      return reply({ interrupted: await prompt(attachment, a, frame.turn, frame.params.text) }, frame.turn);
    case "steer":
      a.running?.steers.push(frame.params.text);
      return reply({}, frame.turn);
    case "interrupt":
      if (a.running?.turn === frame.turn) {
        a.running.aborted = true;
        a.running.wake?.();
      }
      return reply({}, frame.turn);
    case "checkpoint": {
      const path = join(a.dir, TRANSCRIPT);
      const size = existsSync(path) ? statSync(path).size : 0;
      return reply(size ? [{ path: TRANSCRIPT, size, append_only: true }] : []);
    }
    case "detach":
      attachments.delete(attachment);
      return reply({});
  }
}

const splitter = new LineSplitter((line) => {
  handle(decodeBrainFrame(line)).catch((err: Error) => {
    process.stderr.write(`echo runner: ${err.stack ?? err.message}\n`);
    process.exit(1);
  });
});
process.stdin.on("data", (chunk: Buffer) => splitter.push(chunk));
process.stdin.on("end", () => process.exit(0));

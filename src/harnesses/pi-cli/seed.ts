// Seeds a pi session from a neutral transcript (a handoff or rebuild): one session file in pi's own format
// (a header, then message entries chained by parentId), which `pi --session <file>` resumes as its own.
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SeedMessage, seedMessages } from "../../core/seed-messages.js";
import { sessionOptions, workingDir } from "../cli/options.js";
import type { SeedInput } from "../family.js";
import { PROVIDER } from "./models-json.js";

/** pi's session file format version (CURRENT_SESSION_VERSION of pi-coding-agent). */
const SESSION_VERSION = 3;
/** pi's built-in tools: calls to any other tool are carried as text. */
const PI_TOOL_NAMES = new Set(["read", "bash", "edit", "write", "grep", "find", "ls"]);
const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

function piMessages(message: SeedMessage, model: string, now: number): unknown[] {
  switch (message.role) {
    case "user":
      return [{ role: "user", content: [{ type: "text", text: message.text }], timestamp: now }];
    case "assistant":
      return [
        {
          role: "assistant",
          content: message.parts.map((p) =>
            p.type === "text"
              ? { type: "text", text: p.text }
              : { type: "toolCall", id: p.id, name: p.name, arguments: p.arguments },
          ),
          api: "openai-completions",
          provider: PROVIDER,
          model,
          usage: ZERO_USAGE,
          stopReason: message.parts.some((p) => p.type === "call") ? "toolUse" : "stop",
          timestamp: now,
        },
      ];
    case "tool":
      return message.results.map((r) => ({
        role: "toolResult",
        toolCallId: r.id,
        toolName: r.name,
        content: [{ type: "text", text: r.text }],
        isError: r.is_error,
        timestamp: now,
      }));
  }
}

export async function seedPi(input: SeedInput, sessionsDir: string): Promise<void> {
  const cwd = workingDir("pi-cli", input.dir, sessionOptions("pi-cli", input.config));
  const dir = join(input.dir, sessionsDir);
  mkdirSync(dir, { recursive: true });
  const id = randomUUID();
  const now = new Date();
  const messages = seedMessages(input.transcript, {
    native: (name) => input.sameFamily || PI_TOOL_NAMES.has(name),
  });
  const lines: unknown[] = [
    { type: "session", version: SESSION_VERSION, id, timestamp: now.toISOString(), cwd },
  ];
  let parentId: string | null = null;
  for (const message of messages) {
    for (const piMessage of piMessages(message, input.config.model ?? "", now.getTime())) {
      const entryId = randomUUID().slice(0, 8);
      lines.push({
        type: "message",
        id: entryId,
        parentId,
        timestamp: now.toISOString(),
        message: piMessage,
      });
      parentId = entryId;
    }
  }
  const name = `${now.toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`;
  writeFileSync(join(dir, name), lines.map((l) => `${JSON.stringify(l)}\n`).join(""), { flag: "wx" });
}

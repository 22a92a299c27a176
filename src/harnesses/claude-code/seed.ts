// Seeds a Claude Code session from a neutral transcript (a handoff or rebuild): a project transcript in Claude's
// own JSONL (records chained by parentUuid, as 2.1.x writes them) plus Brain's state file naming the session, so
// `claude --resume <id>` loads the history as its own.
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type SeedMessage, seedMessages } from "../../core/seed-messages.js";
import { sessionOptions, workingDir } from "../cli/options.js";
import type { SeedInput } from "../family.js";
import { transcriptPath } from "./transcripts.js";

/** The Claude Code version the seeded records claim (the format was read from 2.1.197's transcripts). */
const RECORD_VERSION = "2.1.197";

function content(message: SeedMessage): unknown {
  switch (message.role) {
    case "user":
      return message.text;
    case "assistant":
      return message.parts.map((p) =>
        p.type === "text"
          ? { type: "text", text: p.text }
          : { type: "tool_use", id: p.id, name: p.name, input: p.arguments },
      );
    case "tool":
      return message.results.map((r) => ({
        tool_use_id: r.id,
        type: "tool_result",
        content: r.text,
        is_error: r.is_error,
      }));
  }
}

export async function seedClaudeCode(input: SeedInput, configDir: string, stateFile: string): Promise<void> {
  const cwd = workingDir("claude-code", input.dir, sessionOptions("claude-code", input.config));
  const sessionId = randomUUID();
  const messages = seedMessages(input.transcript, { native: () => input.sameFamily });
  // One millisecond apart: Claude Code 2.1.83 (claude-agent-acp's) resumes from the latest record by timestamp,
  // and a tie makes it take the first, leaving the rest of the chain out.
  const start = Date.now();
  const common = {
    isSidechain: false,
    userType: "external",
    entrypoint: "sdk-cli",
    cwd,
    sessionId,
    version: RECORD_VERSION,
    gitBranch: "",
  };
  const lines: string[] = [];
  let parentUuid: string | null = null;
  for (const [i, message] of messages.entries()) {
    const uuid = randomUUID();
    const timestamp = new Date(start + i).toISOString();
    const record =
      message.role === "assistant"
        ? {
            parentUuid,
            ...common,
            type: "assistant",
            message: {
              // Unique per record: Claude Code drops a tool_use whose message id repeats (cli-relocation.md).
              id: `msg_brain_${sessionId.slice(0, 8)}_${i}`,
              type: "message",
              role: "assistant",
              model: input.config.model ?? "claude",
              content: content(message),
              stop_reason: message.parts.some((p) => p.type === "call") ? "tool_use" : "end_turn",
              stop_sequence: null,
              usage: { input_tokens: 0, output_tokens: 0 },
            },
            uuid,
            timestamp,
          }
        : {
            parentUuid,
            ...common,
            type: "user",
            message: { role: "user", content: content(message) },
            uuid,
            timestamp,
          };
    lines.push(JSON.stringify(record));
    parentUuid = uuid;
  }
  const file = transcriptPath(join(input.dir, configDir), cwd, sessionId);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, lines.map((l) => `${l}\n`).join(""), { flag: "wx" });
  writeFileSync(join(input.dir, stateFile), `${JSON.stringify({ session_id: sessionId }, null, 2)}\n`);
}

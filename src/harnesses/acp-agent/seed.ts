// Seeds the ACP presets from a neutral transcript (a handoff or rebuild), in the files each agent's session/load
// reads: claude-agent-acp resumes a Claude Code transcript under its CLAUDE_CONFIG_DIR, codex-acp a Codex rollout
// under its CODEX_HOME (both written by their CLI family's seeder), gemini-cli 0.61 a chat recording under its
// GEMINI_CLI_HOME. acp.json names the session, so the harness's next start loads it (the profile's `place` first
// registers the gemini chat for the working directory).
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { seedMessages } from "../../core/seed-messages.js";
import { seedClaudeCode } from "../claude-code/seed.js";
import { sessionOptions, workingDir } from "../cli/options.js";
import { seedCodex } from "../codex/seed.js";
import type { SeedInput } from "../family.js";
import { STATE_FILE } from "./harness.js";
import { CLAUDE_DIR, CODEX_DIR, GEMINI_DIR } from "./presets.js";

/** Claude Code's seeder already names its session `session_id`, as acp.json does. */
export const seedAcpClaude = (input: SeedInput) => seedClaudeCode(input, CLAUDE_DIR, STATE_FILE);

export const seedAcpCodex = (input: SeedInput) =>
  seedCodex(input, CODEX_DIR, STATE_FILE, (threadId) => ({ session_id: threadId }));

interface GeminiToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  result?: unknown[];
  status: "success" | "error";
  timestamp: string;
}

/**
 * A gemini-cli chat recording (its ChatRecordingService's JSONL): a metadata line, then one record per message;
 * a model message's calls carry their results, which gemini turns back into functionResponse parts on load.
 */
export async function seedAcpGemini(input: SeedInput): Promise<void> {
  const cwd = workingDir("acp:gemini", input.dir, sessionOptions("acp:gemini", input.config));
  const sessionId = randomUUID();
  const now = new Date();
  const timestamp = now.toISOString();
  const lines: unknown[] = [
    {
      sessionId,
      projectHash: createHash("sha256").update(resolve(cwd)).digest("hex"),
      startTime: timestamp,
      lastUpdated: timestamp,
      kind: "main",
    },
  ];
  let calls: GeminiToolCall[] = [];
  for (const message of seedMessages(input.transcript, { native: () => input.sameFamily })) {
    if (message.role === "tool") {
      for (const r of message.results) {
        const call = calls.find((c) => c.id === r.id);
        // As parts, as gemini records them: a string result that is empty would be dropped on load.
        const response = r.is_error ? { error: r.text } : { output: r.text };
        const result = [{ functionResponse: { id: r.id, name: r.name, response } }];
        if (call) Object.assign(call, { result, status: r.is_error ? "error" : "success" });
      }
      continue;
    }
    const record = { id: randomUUID(), timestamp };
    if (message.role === "user") {
      lines.push({ ...record, type: "user", content: [{ text: message.text }] });
      continue;
    }
    calls = message.parts.flatMap((p) =>
      p.type === "call"
        ? [{ id: p.id, name: p.name, args: p.arguments, status: "success" as const, timestamp }]
        : [],
    );
    const content = message.parts.flatMap((p) => (p.type === "text" ? [{ text: p.text }] : []));
    lines.push({
      ...record,
      type: "gemini",
      content,
      ...(calls.length ? { toolCalls: calls } : {}),
      ...(input.config.model ? { model: input.config.model } : {}),
    });
  }
  // Any project folder: `place` hands it to the working directory before session/load looks there.
  const chats = join(input.dir, GEMINI_DIR, ".gemini", "tmp", "brain-seeded", "chats");
  mkdirSync(chats, { recursive: true });
  const minute = timestamp.slice(0, 16).replace(/:/g, "-");
  const file = join(chats, `session-${minute}-${sessionId.slice(0, 8)}.jsonl`);
  // Written whole after the calls got their results (records are objects shared with `calls`).
  writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(""), { flag: "wx" });
  writeFileSync(join(input.dir, STATE_FILE), `${JSON.stringify({ session_id: sessionId }, null, 2)}\n`);
}

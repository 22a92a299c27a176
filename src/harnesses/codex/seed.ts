// Seeds a Codex thread from a neutral transcript (a handoff or rebuild): a rollout file (session_meta, then the
// conversation as Responses API items) under CODEX_HOME/sessions and Brain's state file naming the thread, so
// `thread/resume` rebuilds its history from it (cli-relocation.md: a rollout alone is enough).
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SeedMessage, seedMessages } from "../../core/seed-messages.js";
import { sessionOptions, workingDir } from "../cli/options.js";
import type { SeedInput } from "../family.js";

/** The Codex version the rollout claims (its format was read from 0.171.0's rollouts). */
const CLI_VERSION = "0.171.0";

function items(message: SeedMessage): unknown[] {
  switch (message.role) {
    case "user":
      return [{ type: "message", role: "user", content: [{ type: "input_text", text: message.text }] }];
    case "assistant":
      return message.parts.map((p) =>
        p.type === "text"
          ? { type: "message", role: "assistant", content: [{ type: "output_text", text: p.text }] }
          : { type: "function_call", name: p.name, arguments: JSON.stringify(p.arguments), call_id: p.id },
      );
    case "tool":
      return message.results.map((r) => ({ type: "function_call_output", call_id: r.id, output: r.text }));
  }
}

/** `state`: what the state file says of the thread (the codex family's `thread_id`; the acp harness's `session_id`). */
export async function seedCodex(
  input: SeedInput,
  codexHome: string,
  stateFile: string,
  state: (threadId: string) => Record<string, unknown> = (threadId) => ({ thread_id: threadId }),
): Promise<void> {
  const cwd = workingDir("codex", input.dir, sessionOptions("codex", input.config));
  const threadId = randomUUID();
  const now = new Date();
  const timestamp = now.toISOString();
  const meta = {
    id: threadId,
    session_id: threadId,
    timestamp,
    cwd,
    originator: "brain",
    cli_version: CLI_VERSION,
    source: "vscode",
    model_provider: "brain",
  };
  const lines: unknown[] = [{ timestamp, type: "session_meta", payload: meta }];
  for (const message of seedMessages(input.transcript, { native: () => input.sameFamily })) {
    for (const payload of items(message)) lines.push({ timestamp, type: "response_item", payload });
  }
  const day = timestamp.slice(0, 10).split("-");
  const dir = join(input.dir, codexHome, "sessions", ...day);
  mkdirSync(dir, { recursive: true });
  const name = `rollout-${timestamp.slice(0, 19).replace(/:/g, "-")}-${threadId}.jsonl`;
  writeFileSync(join(dir, name), lines.map((l) => `${JSON.stringify(l)}\n`).join(""), { flag: "wx" });
  writeFileSync(join(input.dir, stateFile), `${JSON.stringify(state(threadId), null, 2)}\n`);
}

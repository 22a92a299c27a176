// Seeds an opencode session from a neutral transcript (a handoff or rebuild): the session as `opencode export`
// writes it (read from 1.18.33's exports), which the harness imports into a fresh database before the server
// starts, exactly as it does for a restored checkpoint. A tool's result lives in its call's part.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SeedMessage, seedMessages } from "../../core/seed-messages.js";
import { sessionOptions, workingDir } from "../cli/options.js";
import type { SeedInput } from "../family.js";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PROVIDER = "brain";

/** opencode's ids: a prefix, 12 hex digits of time (inverted for sessions, which list newest first), 14 random. */
function makeIds(now: number) {
  let counter = 0;
  const random = () => [...randomBytes(14)].map((b) => ALPHABET[b % ALPHABET.length]).join("");
  const stamp = (descending: boolean) => {
    let value = BigInt(now) * 4096n + BigInt(++counter);
    if (descending) value = ~value & 0xffffffffffffn;
    return value.toString(16).padStart(12, "0").slice(-12);
  };
  return (prefix: string, descending = false) => `${prefix}_${stamp(descending)}${random()}`;
}

export async function seedOpencode(input: SeedInput, stateFile: string, exportFile: string): Promise<void> {
  const cwd = workingDir("opencode", input.dir, sessionOptions("opencode", input.config));
  const now = Date.now();
  const id = makeIds(now);
  const sessionID = id("ses", true);
  const model = input.config.model ?? "";
  const time = { created: now, completed: now };
  const tokens = { total: 0, input: 0, output: 0, reasoning: 0, cache: { write: 0, read: 0 } };
  const messages: { info: Record<string, unknown>; parts: Record<string, unknown>[] }[] = [];
  let lastUser = "";
  const part = (messageID: string, fields: Record<string, unknown>) => ({
    ...fields,
    id: id("prt"),
    sessionID,
    messageID,
  });
  const seeded: SeedMessage[] = seedMessages(input.transcript, { native: () => input.sameFamily });
  for (const message of seeded) {
    if (message.role === "user") {
      lastUser = id("msg");
      messages.push({
        info: {
          role: "user",
          time: { created: now },
          agent: "build",
          model: { providerID: PROVIDER, modelID: model },
          id: lastUser,
          sessionID,
        },
        parts: [part(lastUser, { type: "text", text: message.text })],
      });
    } else if (message.role === "assistant") {
      const messageID = id("msg");
      const calls = message.parts.some((p) => p.type === "call");
      const parts = [
        part(messageID, { type: "step-start" }),
        ...message.parts.map((p) =>
          p.type === "text"
            ? part(messageID, { type: "text", text: p.text, time: { start: now, end: now } })
            : part(messageID, {
                type: "tool",
                tool: p.name,
                callID: p.id,
                state: {
                  status: "completed",
                  input: p.arguments,
                  output: "",
                  metadata: {},
                  title: p.name,
                  time: { start: now, end: now },
                },
              }),
        ),
        part(messageID, { type: "step-finish", reason: calls ? "tool-calls" : "stop", tokens, cost: 0 }),
      ];
      messages.push({
        info: {
          parentID: lastUser,
          role: "assistant",
          mode: "build",
          agent: "build",
          path: { cwd, root: "/" },
          cost: 0,
          tokens,
          modelID: model,
          providerID: PROVIDER,
          time,
          finish: calls ? "tool-calls" : "stop",
          id: messageID,
          sessionID,
        },
        parts,
      });
    } else {
      // Results go into their calls' parts, in the assistant message just before.
      const parts = messages.at(-1)?.parts ?? [];
      for (const r of message.results) {
        const call = parts.find((p) => p.callID === r.id);
        if (!call) continue;
        const state = call.state as Record<string, unknown>;
        call.state = r.is_error
          ? { status: "error", input: state.input, error: r.text, time: state.time }
          : { ...state, output: r.text };
      }
    }
  }
  const info = {
    id: sessionID,
    slug: "brain-seeded",
    projectID: "global",
    directory: cwd,
    title: `brain ${sessionID}`,
    version: "1.18.33",
    time: { created: now, updated: now },
  };
  writeFileSync(join(input.dir, exportFile), JSON.stringify({ info, messages }), { flag: "wx" });
  writeFileSync(join(input.dir, stateFile), `${JSON.stringify({ session_id: sessionID }, null, 2)}\n`);
}

// The CLI agent server's events over HTTP are as large as Brain reads an HTTP agent's (64 MiB an SSE event), not cut
// to a stdio host's 4 MiB line: a CLI's large tool call reaches Brain whole.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { serveHttp } from "../../sdk/ts/nui/index.js";
import type { HarnessFactory } from "../core/harness.js";
import { HttpAgentClient } from "../harnesses/http/client.js";
import { MAX_PROMPT_BYTES } from "../protocol/runner.js";
import { CliAgentServer } from "./agent-server.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A harness whose turn is one Write call of `content`, and its result. */
function writer(content: string): HarnessFactory {
  return {
    name: "writer",
    supportsSteering: false,
    async open(options) {
      return {
        async prompt(_text, ctx) {
          const turn = ctx.turn;
          options.emit({
            type: "tool.call",
            turn,
            data: { id: "w1", name: "Write", arguments: { content } },
          });
          const result = { id: "w1", content: [{ type: "text" as const, text: "written" }], is_error: false };
          options.emit({ type: "tool.result", turn, data: result });
          return { interrupted: false };
        },
        steer: async () => {},
        interrupt: async () => {},
        checkpoint: async () => [],
        close: async () => {},
      };
    },
  };
}

/** A harness whose turn answers with the length of the prompt and of the system prompt it was opened with. */
const measurer: HarnessFactory = {
  name: "measurer",
  supportsSteering: false,
  async open(options) {
    return {
      async prompt(text, ctx) {
        const system = options.config.system_prompt?.length ?? 0;
        options.emit({ type: "assistant.delta", turn: ctx.turn, data: { text: `${text.length} ${system}` } });
        return { interrupted: false };
      },
      steer: async () => {},
      interrupt: async () => {},
      checkpoint: async () => [],
      close: async () => {},
    };
  },
};

describe("the CLI agent server's runs", () => {
  it("take a prompt and a system prompt as long as Brain lets a session have: the docker harness sends both in one /run", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-agent-test-"));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const server = new CliAgentServer(measurer, home);
    const serving = await serveHttp(server, { port: 0, host: "127.0.0.1", routes: server.routes() });
    cleanups.push(() => serving.close());
    // The most each of them may be, JSON-encoded (the quotes count).
    const message = "p".repeat(MAX_PROMPT_BYTES - 2);
    const systemPrompt = "s".repeat(MAX_PROMPT_BYTES - 100);
    const out: unknown[] = [];
    const client = new HttpAgentClient(serving.url, "agent server");
    const body = { message, systemPrompt, runId: "r1", env: { BRAIN_PROVIDER_API_KEY: "k" } };
    const ending = await client.run(body, new AbortController().signal, (d) => {
      if (d.ok) out.push(d.event);
    });
    expect(ending).toBe("done");
    expect(out).toContainEqual({ type: "text", content: `${message.length} ${systemPrompt.length}` });
  });
});

describe("the CLI agent server's events", () => {
  it("sends a CLI's event of several MiB whole: over HTTP the limit is Brain's 64 MiB event, not a host's 4 MiB line", async () => {
    // A Write of a 5 MiB file: the call's arguments alone pass the 4 MiB a stdio host's line may take.
    const content = "x".repeat(5 << 20);
    const home = mkdtempSync(join(tmpdir(), "brain-agent-test-"));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const server = new CliAgentServer(writer(content), home);
    const serving = await serveHttp(server, { port: 0, host: "127.0.0.1", routes: server.routes() });
    cleanups.push(() => serving.close());
    const out: { type: string; [field: string]: unknown }[] = [];
    const client = new HttpAgentClient(serving.url, "agent server");
    const ending = await client.run({ message: "go", runId: "r1" }, new AbortController().signal, (d) => {
      if (d.ok) out.push(d.event as (typeof out)[number]);
    });
    expect(ending).toBe("done");
    const call = out.find((e) => e.type === "tool_call") as { args?: { content?: string } } | undefined;
    expect(call?.args?.content).toBe(content);
    expect(out).toContainEqual({ type: "tool_result", toolCallId: "w1", content: "written", isError: false });
  });
});

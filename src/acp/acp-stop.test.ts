// `brain acp`'s session/prompt stopReason for a turn that completed cut short: ACP has max_tokens and
// max_turn_requests, and a harness says so in its last message's stop_reason, in its own words.
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { ProcessFactory } from "../harnesses/process/factory.js";
import { connectEditor } from "../testing/acp-editor.js";
import { inlineRunnerArgs } from "../testing/inline-runner.js";
import { useTestDaemon } from "../testing/use-daemon.js";

/** A runner whose answer to a prompt stops for the reason the prompt names. */
const stopping = new ProcessFactory({
  name: "stopping",
  command: process.execPath,
  args: inlineRunnerArgs(
    "",
    `
  if (f.method !== "prompt") return reply(f.method === "checkpoint" ? [] : {});
  const text = "cut off here";
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.delta", data: { text } });
  send({ attachment: f.attachment, turn: f.turn, event: "assistant.message", data: { text, stop_reason: f.params.text } });
  reply({});`,
  ),
});
const t = useTestDaemon({ factories: [stopping] });

describe("brain acp session/prompt stopReason", () => {
  it("answers max_tokens or max_turn_requests for a turn its harness says was cut short, end_turn otherwise", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
        _meta: { brain: { harness: "stopping" } },
      });
      const stopFor = async (reason: string) =>
        (
          await editor.ctx.request(methods.agent.session.prompt, {
            sessionId,
            prompt: [{ type: "text", text: reason }],
          })
        ).stopReason;
      expect(await stopFor("max_tokens")).toBe("max_tokens");
      expect(await stopFor("length")).toBe("max_tokens");
      expect(await stopFor("max_steps")).toBe("max_turn_requests");
      expect(await stopFor("max_turn_requests")).toBe("max_turn_requests");
      expect(await stopFor("stop")).toBe("end_turn");
      expect(await stopFor("refusal")).toBe("end_turn");
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

// `brain acp`'s permission requests shown on the tool call they are for: an editor draws the request on the card
// whose toolCallId it names, so two calls of one tool at once must each get their own.
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { ProcessFactory } from "../harnesses/process/factory.js";
import { connectEditor } from "../testing/acp-editor.js";
import { inlineRunnerArgs } from "../testing/inline-runner.js";
import { useTestDaemon } from "../testing/use-daemon.js";

/** A runner that calls the echo tool twice at once, and answers the prompt when both calls have returned. */
const twice = new ProcessFactory({
  name: "twice",
  command: process.execPath,
  args: inlineRunnerArgs(
    "const waiting = new Map();",
    `
  if (f.method === "prompt") {
    waiting.set(f.turn, { left: 2, frame: f });
    for (const n of [1, 2]) {
      const params = { id: "call-" + n, name: "echo", arguments: { value: "call " + n } };
      send({ attachment: f.attachment, turn: f.turn, id: "frame-" + n, method: "tool.call", params });
    }
    return;
  }
  if (f.method === undefined) {
    const turn = waiting.get(f.turn);
    if (--turn.left === 0) {
      send({ attachment: f.attachment, turn: f.turn, event: "assistant.message", data: { text: "both done" } });
      send({ attachment: f.attachment, turn: f.turn, id: turn.frame.id, result: {} });
    }
    return;
  }
  reply(f.method === "checkpoint" ? [] : {});`,
  ),
});
const t = useTestDaemon({ factories: [twice] });

describe("brain acp permission requests", () => {
  it("names the tool call each request is for, by its id, when two calls of one tool run at once", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin], {
      pick: () => ({ outcome: "selected", optionId: "allow" }),
    });
    try {
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
        _meta: {
          brain: { harness: "twice", config: { tools: ["echo"] }, permissions: { tools: { echo: "ask" } } },
        },
      });
      const reply = await editor.ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "go" }],
      });
      expect(reply.stopReason).toBe("end_turn");
      const asked = editor.permissions.map((p) => [p.toolCall.toolCallId, p.toolCall.rawInput]);
      expect(asked).toHaveLength(2);
      expect(asked).toEqual(
        expect.arrayContaining([
          ["call-1", { value: "call 1" }],
          ["call-2", { value: "call 2" }],
        ]),
      );
      const requested = (await t.client().log(sessionId, 0, 100)).events.flatMap((e) =>
        e.type === "permission.requested" ? [e.data.tool_call_id] : [],
      );
      expect(requested.sort()).toEqual(["call-1", "call-2"]);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

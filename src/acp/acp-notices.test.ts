// A harness's warning as an ACP notice: sent only to an editor that advertised `session.notices`, and only live.
import { type ClientCapabilities, methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor } from "../testing/acp-editor.js";
import { scripted } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";

describe("brain acp notices", () => {
  it("sends a harness.warning as a notice only to an editor that advertised session.notices, and not on load", async () => {
    const warning = scripted(async (options, turn) => {
      options.emit({ type: "harness.warning", turn, data: { message: "the model's reply was cut short" } });
      options.emit({ type: "assistant.delta", turn, data: { text: "ok" } });
    });
    const daemon = await startTestDaemon({ factories: [warning] });
    const server = ["--server", daemon.url, "--token", daemon.tokens.admin];
    const notices = async (capabilities: ClientCapabilities, load?: string) => {
      const editor = await connectEditor(server, { capabilities });
      try {
        let sessionId = load;
        if (sessionId) {
          await editor.ctx.request(methods.agent.session.load, { sessionId, cwd: "/", mcpServers: [] });
        } else {
          sessionId = (
            await editor.ctx.request(methods.agent.session.new, {
              cwd: "/",
              mcpServers: [],
              _meta: { brain: { harness: "scripted" } },
            })
          ).sessionId;
          await editor.ctx.request(methods.agent.session.prompt, {
            sessionId,
            prompt: [{ type: "text", text: "go" }],
          });
        }
        const kinds = editor.updates.map((n) => n.update.sessionUpdate);
        expect(kinds).toContain("agent_message_chunk");
        return { sessionId, notices: kinds.filter((kind) => kind === "notice").length };
      } finally {
        editor.child.kill("SIGKILL");
      }
    };
    try {
      // ACP: an agent MUST send notices only to a client that advertised them; they are live, not history.
      expect((await notices({})).notices).toBe(0);
      const live = await notices({ session: { notices: {} } });
      expect(live.notices).toBe(1);
      expect((await notices({ session: { notices: {} } }, live.sessionId)).notices).toBe(0);
    } finally {
      await daemon.cleanup();
    }
  });
});

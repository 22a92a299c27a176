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

  it("tells the editor, once, that the MCP servers its session/new named were not started", async () => {
    const reply = scripted(async (options, turn) => {
      options.emit({ type: "assistant.delta", turn, data: { text: "ok" } });
    });
    const daemon = await startTestDaemon({ factories: [reply] });
    const editor = await connectEditor(["--server", daemon.url, "--token", daemon.tokens.admin]);
    try {
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [{ name: "files", command: "/bin/false", args: [], env: [] }],
        _meta: { brain: { harness: "scripted" } },
      });
      const prompt = { sessionId, prompt: [{ type: "text" as const, text: "go" }] };
      await editor.ctx.request(methods.agent.session.prompt, prompt);
      await editor.ctx.request(methods.agent.session.prompt, prompt);
      const texts = editor.updates.flatMap((n) =>
        n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text"
          ? [n.update.content.text]
          : [],
      );
      const told = texts.filter((text) => text.includes("did not start the MCP servers"));
      expect(told).toHaveLength(1);
      expect(told[0]).toContain("(files)");
      expect(texts.indexOf(told[0]!)).toBe(0);
    } finally {
      editor.child.kill("SIGKILL");
      await daemon.cleanup();
    }
  });

  it("tells an editor that loads a session, once, that the MCP servers its session/load named were not started", async () => {
    const reply = scripted(async (options, turn) => {
      options.emit({ type: "assistant.delta", turn, data: { text: "ok" } });
    });
    const daemon = await startTestDaemon({ factories: [reply] });
    const server = ["--server", daemon.url, "--token", daemon.tokens.admin];
    const first = await connectEditor(server);
    const second = await connectEditor(server);
    try {
      const { sessionId } = await first.ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
        _meta: { brain: { harness: "scripted" } },
      });
      await second.ctx.request(methods.agent.session.load, {
        sessionId,
        cwd: "/",
        mcpServers: [{ name: "files", command: "/bin/false", args: [], env: [] }],
      });
      const prompt = { sessionId, prompt: [{ type: "text" as const, text: "go" }] };
      await second.ctx.request(methods.agent.session.prompt, prompt);
      await second.ctx.request(methods.agent.session.prompt, prompt);
      const told = second.updates.filter(
        (n) =>
          n.update.sessionUpdate === "agent_message_chunk" &&
          n.update.content.type === "text" &&
          n.update.content.text.includes("did not start the MCP servers this editor gave it (files)"),
      );
      expect(told).toHaveLength(1);
    } finally {
      first.child.kill("SIGKILL");
      second.child.kill("SIGKILL");
      await daemon.cleanup();
    }
  });
});

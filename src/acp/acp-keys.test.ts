// `brain acp --server` sends an Idempotency-Key with each create and prompt (and close): its client asks again a
// request the daemon died holding, which makes one session and runs one turn only when the request is keyed.
import { tmpdir } from "node:os";
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { commandKey } from "../core/command-keys.js";
import { connectEditor } from "../testing/acp-editor.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("brain acp --server's keys", () => {
  it("keys session/new's create and each session/prompt with a key of its own", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: tmpdir(),
        mcpServers: [],
        _meta: { brain: { harness: "echo" } },
      });
      expect((await t.client().session(sessionId)).idempotency?.key).toMatch(UUID);
      for (const text of ["one", "two"]) {
        const reply = await editor.ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text }],
        });
        expect(reply.stopReason).toBe("end_turn");
      }
      const prompts = (await t.client().log(sessionId)).events.filter((e) => e.type === "user.prompt");
      const keys = prompts.map(commandKey);
      expect(keys).toEqual([expect.stringMatching(UUID), expect.stringMatching(UUID)]);
      expect(keys[0]).not.toBe(keys[1]);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

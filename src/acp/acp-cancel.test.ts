// `brain acp` after the editor's session/cancel: ACP has the editor answer every pending permission request
// cancelled, and an agent asks nothing more of it for that turn. A request the harness raises once the cancel is
// on its way (the interrupt not yet landed) is the turn's, cancelled: it is not relayed to the editor.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { ProcessFactory } from "../harnesses/process/factory.js";
import { connectEditor } from "../testing/acp-editor.js";
import { holdingProxy } from "../testing/holding-proxy.js";
import { inlineRunnerArgs } from "../testing/inline-runner.js";
import { useTestDaemon } from "../testing/use-daemon.js";

/**
 * A runner whose turn calls the echo tool (its permission "ask") only once the test has made `flag`: after the
 * editor's cancel reached `brain acp`, before its interrupt reached the daemon. The turn settles on the answer.
 */
const flagDir = mkdtempSync(join(tmpdir(), "brain-acp-cancel-"));
const flag = join(flagDir, "cancelled");
const late = new ProcessFactory({
  name: "late",
  command: process.execPath,
  args: inlineRunnerArgs(
    "let prompt;",
    `
  if (f.method === "prompt") {
    prompt = f;
    const wait = setInterval(() => {
      if (!fs.existsSync(${JSON.stringify(flag)})) return;
      clearInterval(wait);
      const params = { id: "call-late", name: "echo", arguments: { value: "late" } };
      send({ attachment: f.attachment, turn: f.turn, id: "frame-late", method: "tool.call", params });
    }, 20);
    return;
  }
  if (f.method === undefined) {
    send({ attachment: prompt.attachment, turn: prompt.turn, id: prompt.id, result: { interrupted: true } });
    return;
  }
  reply(f.method === "checkpoint" ? [] : {});`,
  ),
});
const t = useTestDaemon({ factories: [late] });

describe("brain acp session/cancel", () => {
  it("relays no permission request the turn raises after the editor cancelled it", async () => {
    // Between brain acp and the daemon: holds its interrupt, so the turn's request comes between the two.
    const proxy = await holdingProxy(t.url, "/interrupt");
    const editor = await connectEditor(["--server", proxy.url, "--token", t.tokens.admin], {
      pick: () => ({ outcome: "selected", optionId: "allow" }),
    });
    try {
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
        _meta: {
          brain: { harness: "late", config: { tools: ["echo"] }, permissions: { tools: { echo: "ask" } } },
        },
      });
      const reply = editor.ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "go" }],
      });
      const logged = async (type: string) =>
        (await t.client().log(sessionId, 0, 100)).events.some((e) => e.type === type);
      await expect.poll(() => logged("turn.started"), { timeout: 60_000 }).toBe(true);
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      // brain acp has taken the cancel (its interrupt is held): only now does the runner ask.
      await expect.poll(() => proxy.held.length, { timeout: 60_000 }).toBe(1);
      writeFileSync(flag, "");
      await expect.poll(() => logged("permission.requested"), { timeout: 60_000 }).toBe(true);
      for (const release of proxy.held) release();
      // Answered once turn.settled was streamed, after the request: an editor asked has been asked by now.
      expect((await reply).stopReason).toBe("cancelled");
      const events = (await t.client().log(sessionId, 0, 100)).events;
      // The request was made (the test drove the interleaving it is about) and was not allowed.
      expect(events.filter((e) => e.type === "permission.requested")).toHaveLength(1);
      expect(events.find((e) => e.type === "permission.resolved")).toMatchObject({
        data: { decision: "deny" },
      });
      expect(editor.permissions).toEqual([]);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
      proxy.close();
      rmSync(flagDir, { recursive: true, force: true });
    }
  }, 120_000);
});

// ACP's prompt turn: after session/cancel the agent "MUST catch these errors and return the semantically meaningful
// cancelled stop reason, so that Clients can reliably confirm the cancellation". A prompt cancelled while on its way
// to the daemon, which then refused it (here: another client's turn started meanwhile), was answered with the
// refusal, an internal error, so the editor showed an error for a turn it had cancelled.
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor } from "../testing/acp-editor.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const manyWords = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");

describe("brain acp session/cancel", () => {
  it("answers cancelled to a prompt the daemon refuses after the editor cancelled it", async () => {
    // Between brain acp and the daemon: holds the prompt, so the cancel and the other client's turn come first.
    const held: (() => void)[] = [];
    const target = new URL(t.url);
    const proxy = createServer((req, res) => {
      const forward = () => {
        const out = request(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        req.pipe(out);
      };
      if (req.method === "POST" && req.url?.endsWith("/prompt")) held.push(forward);
      else forward();
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const port = (proxy.address() as { port: number }).port;
    const editor = await connectEditor(["--server", `http://127.0.0.1:${port}`, "--token", t.tokens.admin]);
    try {
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: tmpdir(),
        mcpServers: [],
        _meta: { brain: { harness: "echo", config: { options: { delay_ms: 40 } } } },
      });
      const reply = editor.ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "hello" }],
      });
      const answer = reply.then(
        (r) => r.stopReason,
        (err: unknown) => `refused: ${JSON.stringify(err)}`,
      );
      await expect.poll(() => held.length, { timeout: 60_000 }).toBe(1);
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      // Handled in order: once this is answered, brain acp has taken the cancel.
      await editor.ctx.request(methods.agent.session.list, {});
      const other = await t.client().prompt(sessionId, manyWords);
      for (const release of held) release();
      expect(await answer).toBe("cancelled");
      // The daemon refused the editor's prompt (the test drove the case it is about): one turn, the other client's.
      const events = (await t.client().log(sessionId, 0, 1000)).events;
      expect(events.filter((e) => e.type === "turn.started").map((e) => e.turn)).toEqual([other.turn]);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
      proxy.closeAllConnections();
      proxy.close();
    }
  });
});

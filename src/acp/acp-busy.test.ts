// A session/prompt on a session whose turn is running: the daemon refuses it (409) in its REST words ("turn T is
// still running: steer or interrupt it first"), which name nothing an ACP editor can send. brain acp says what the
// editor can do (wait, or session/cancel), with a machine-readable reason. And an editor's "stop and send" on
// another client's turn (session/cancel, then a prompt at once) waits for that turn to settle, as it does for its own.
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import {
  connectEditor,
  newSlowEchoSession,
  promptStopReason,
  type TestEditor,
} from "../testing/acp-editor.js";
import { holdingProxy } from "../testing/holding-proxy.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const manyWords = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");

/** session/prompt of `text`, which the test expects refused: the JSON-RPC error it was answered with. */
async function promptRefusal(editor: TestEditor, sessionId: string, text: string) {
  const answer = await editor.ctx
    .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    .then(
      (r) => ({ answered: r.stopReason }),
      (err: { code: number; data?: { reason?: string; turn?: string; message?: string } }) => err,
    );
  if ("answered" in answer) throw new Error(`expected a refusal, the prompt was answered ${answer.answered}`);
  return { code: answer.code, data: answer.data };
}

const settledStatuses = async (sessionId: string) =>
  (await t.client().log(sessionId, 0, 1000)).events.flatMap((e) =>
    e.type === "turn.settled" ? [e.data.status] : [],
  );

describe("brain acp session/prompt while a turn runs", () => {
  it("refuses it during another client's turn saying to wait or send session/cancel, reason busy", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const sessionId = await newSlowEchoSession(editor);
      const other = await t.client().prompt(sessionId, manyWords);
      expect(await promptRefusal(editor, sessionId, "next")).toEqual({
        code: -32603,
        data: {
          reason: "busy",
          turn: other.turn,
          message: `session ${sessionId} is running a turn (started by another client): wait for it to end, or send session/cancel first`,
        },
      });
      // brain acp's refused prompt took control of the session (the daemon's drive check): it stops the turn.
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      await expect.poll(() => settledStatuses(sessionId), { timeout: 60_000 }).toEqual(["interrupted"]);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });

  it("refuses a second prompt of the editor's own while its first runs, naming that one", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const sessionId = await newSlowEchoSession(editor);
      const first = promptStopReason(editor, sessionId, manyWords);
      await expect
        .poll(() => editor.updates.filter((u) => u.sessionId === sessionId).length)
        .toBeGreaterThan(0);
      const refusal = await promptRefusal(editor, sessionId, "next");
      expect(refusal).toMatchObject({ code: -32603, data: { reason: "busy" } });
      expect(refusal.data?.message).toBe(
        `session ${sessionId} is running a turn (this editor's earlier session/prompt, not answered yet): wait for it to end, or send session/cancel first`,
      );
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      expect(await first).toBe("cancelled");
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });

  it("runs a prompt sent right after a cancel of another client's turn once that turn has settled", async () => {
    // Between brain acp and the daemon: holds the interrupt, so the other turn runs on while the new prompt comes.
    const proxy = await holdingProxy(t.url, "/interrupt");
    const editor = await connectEditor(["--server", proxy.url, "--token", t.tokens.admin]);
    try {
      const sessionId = await newSlowEchoSession(editor);
      await t.client().prompt(sessionId, manyWords);
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      await expect.poll(() => proxy.held.length, { timeout: 60_000 }).toBe(1);
      const next = promptStopReason(editor, sessionId, "next");
      // Time for the new prompt to reach the daemon while the turn runs (as it did: refused); only then the interrupt.
      await Promise.race([next, new Promise((resolve) => setTimeout(resolve, 2000))]);
      for (const release of proxy.held) release();
      expect(await next).toBe("end_turn");
      expect(await settledStatuses(sessionId)).toEqual(["interrupted", "completed"]);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
      proxy.close();
    }
  });

  it("waits at most 30 s after the cancel for another client's turn that does not stop, then says so", async () => {
    // The interrupt is held until the end: the other turn (60 s of words) runs on past the wait.
    const proxy = await holdingProxy(t.url, "/interrupt");
    const editor = await connectEditor(["--server", proxy.url, "--token", t.tokens.admin]);
    try {
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
        _meta: { brain: { harness: "echo", config: { options: { delay_ms: 200 } } } },
      });
      const other = await t.client().prompt(sessionId, manyWords);
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      await expect.poll(() => proxy.held.length, { timeout: 60_000 }).toBe(1);
      expect(await promptRefusal(editor, sessionId, "next")).toEqual({
        code: -32603,
        data: {
          reason: "busy",
          turn: other.turn,
          message: `session ${sessionId} is still running a turn 30 s after session/cancel (started by another client): wait for it to end, or send session/cancel again`,
        },
      });
      for (const release of proxy.held) release();
      await expect.poll(() => settledStatuses(sessionId), { timeout: 60_000 }).toEqual(["interrupted"]);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
      proxy.close();
    }
  }, 120_000);
});

// ACP's prompt turn: after session/cancel the agent "MUST catch these errors and return the semantically meaningful
// cancelled stop reason, so that Clients can reliably confirm the cancellation". A prompt cancelled while on its way
// to the daemon, which then refused it (here: another client's turn started meanwhile), was answered with the
// refusal, an internal error, so the editor showed an error for a turn it had cancelled.
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor, newSlowEchoSession, promptStopReason } from "../testing/acp-editor.js";
import { holdingProxy } from "../testing/holding-proxy.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const manyWords = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");

describe("brain acp session/cancel", () => {
  it("answers cancelled to a prompt the daemon refuses after the editor cancelled it", async () => {
    // Between brain acp and the daemon: holds the prompt, so the cancel and the other client's turn come first.
    const proxy = await holdingProxy(t.url, "/prompt");
    const editor = await connectEditor(["--server", proxy.url, "--token", t.tokens.admin]);
    try {
      const sessionId = await newSlowEchoSession(editor);
      const answer = promptStopReason(editor, sessionId, "hello");
      await expect.poll(() => proxy.held.length, { timeout: 60_000 }).toBe(1);
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      // Handled in order: once this is answered, brain acp has taken the cancel.
      await editor.ctx.request(methods.agent.session.list, {});
      const other = await t.client().prompt(sessionId, manyWords);
      for (const release of proxy.held) release();
      expect(await answer).toBe("cancelled");
      // The daemon refused the editor's prompt (the test drove the case it is about): one turn, the other client's.
      const events = (await t.client().log(sessionId, 0, 1000)).events;
      expect(events.filter((e) => e.type === "turn.started").map((e) => e.turn)).toEqual([other.turn]);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
      proxy.close();
    }
  });
});

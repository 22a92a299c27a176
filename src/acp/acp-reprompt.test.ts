// An editor's "stop and send": session/cancel, then at once a new session/prompt on the session, not waiting for the
// cancelled prompt's answer (ACP lets it). The new prompt reached the daemon while the cancelled turn was still
// running or settling, and the daemon refused it (409: "is still running", "is settling"): the editor got an
// internal error for the message the person had just sent.
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor, newSlowEchoSession, promptStopReason } from "../testing/acp-editor.js";
import { holdingProxy } from "../testing/holding-proxy.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const manyWords = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");

describe("brain acp session/prompt after session/cancel", () => {
  it("runs a prompt sent right after a cancel once the cancelled turn has settled, rather than refusing it", async () => {
    // Between brain acp and the daemon: holds the interrupt, so the cancelled turn runs on while the new prompt comes.
    const proxy = await holdingProxy(t.url, "/interrupt");
    const editor = await connectEditor(["--server", proxy.url, "--token", t.tokens.admin]);
    try {
      const sessionId = await newSlowEchoSession(editor);
      const first = promptStopReason(editor, sessionId, manyWords);
      const chunks = () => editor.updates.filter((u) => u.sessionId === sessionId).length;
      await expect.poll(chunks, { timeout: 60_000 }).toBeGreaterThan(0);
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      await expect.poll(() => proxy.held.length, { timeout: 60_000 }).toBe(1);
      const second = promptStopReason(editor, sessionId, "next");
      // Time for the new prompt to reach the daemon while the turn runs (as it did: refused); only then the interrupt.
      await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 2000))]);
      for (const release of proxy.held) release();
      expect(await first).toBe("cancelled");
      expect(await second).toBe("end_turn");
      const settled = (await t.client().log(sessionId, 0, 1000)).events.flatMap((e) =>
        e.type === "turn.settled" ? [e.data.status] : [],
      );
      expect(settled).toEqual(["interrupted", "completed"]);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
      proxy.close();
    }
  });
});

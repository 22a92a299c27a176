// `brain acp`'s session/close as ACP has it: the agent "must cancel any ongoing work related to the session (treat
// it as if session/cancel was called)", so a prompt in progress answers stopReason cancelled, and the session ends
// closed. A close sent right after a prompt reached the daemon first: the prompt was refused there and the editor
// got an internal error ("session ... is closed", or a 500 from the closed log) instead of cancelled.
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor, newSlowEchoSession, promptStopReason } from "../testing/acp-editor.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const manyWords = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");

describe("brain acp session/close", () => {
  it("cancels the session's prompt in progress, answered cancelled, and leaves the session closed", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      // Each way the close can meet the prompt: before it reached the daemon, and while its turn runs.
      for (const closeAfterFirstChunk of [false, false, false, true]) {
        const sessionId = await newSlowEchoSession(editor);
        const answer = promptStopReason(editor, sessionId, manyWords);
        if (closeAfterFirstChunk) {
          const chunks = () => editor.updates.filter((u) => u.sessionId === sessionId).length;
          await expect.poll(chunks, { timeout: 60_000 }).toBeGreaterThan(0);
        }
        await editor.ctx.request(methods.agent.session.close, { sessionId });
        expect(await answer).toBe("cancelled");
        const view = await t.client().session(sessionId);
        expect(view.status).toBe("closed");
        const settled = (await t.client().log(sessionId, 0, 1000)).events.flatMap((e) =>
          e.type === "turn.settled" ? [e.data.status] : [],
        );
        expect(settled).not.toContain("completed");
      }
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

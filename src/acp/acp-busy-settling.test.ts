// A session/prompt on a session whose turn is settling (its harness done, turn.settled not yet durable): the daemon
// refuses it (409) in its REST words ("prompt again once its turn.settled is logged"), which an editor cannot read
// as anything to do. brain acp says to send the prompt again in a moment, with a machine-readable reason.
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor, newSlowEchoSession } from "../testing/acp-editor.js";
import { holdWriteOf } from "../testing/held-write.js";
import { useTestDaemon } from "../testing/use-daemon.js";

// The daemon's first turn.settled is held until the test lets it go: its turn settles meanwhile.
const hold = holdWriteOf("turn.settled");
const t = useTestDaemon({ io: hold.io });

describe("brain acp session/prompt while a turn settles", () => {
  it("refuses it saying to send it again in a moment, reason busy", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const sessionId = await newSlowEchoSession(editor);
      const other = await t.client().prompt(sessionId, "hi");
      await hold.held;
      const refusal = await editor.ctx
        .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "next" }] })
        .then(
          (r) => r.stopReason,
          (err: { code: number; data?: unknown }) => ({ code: err.code, data: err.data }),
        );
      hold.release();
      expect(refusal).toEqual({
        code: -32603,
        data: {
          reason: "busy",
          turn: other.turn,
          message: `session ${sessionId} is finishing a turn (started by another client): send the prompt again in a moment`,
        },
      });
    } finally {
      hold.release();
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

// A session/prompt or session/cancel of an editor on a session another client drives (the web UI, `brain attach`:
// the daemon's control lease). The daemon refuses it (409) in its REST words ('controlled by client "X"', a route
// to POST); brain acp says who drives and what the editor's user can do, with `data.reason` "controlled".
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor, newSlowEchoSession } from "../testing/acp-editor.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const manyWords = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");

type Refusal = { code: number; data?: { reason?: string; controller?: string; message?: string } };

describe("brain acp on a session another client drives", () => {
  it("refuses session/prompt saying who drives and what to do, reason controlled", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    const web = t.client({ client: "web-tab" });
    try {
      const sessionId = await newSlowEchoSession(editor);
      await web.prompt(sessionId, manyWords); // the web tab's turn: it holds control while it drives
      const refusal = await editor.ctx
        .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "next" }] })
        .then(
          (r) => ({ answered: r.stopReason }),
          (err: Refusal) => ({ code: err.code, data: err.data }),
        );
      expect(refusal).toEqual({
        code: -32603,
        data: {
          reason: "controlled",
          controller: "web-tab",
          message: `another client ("web-tab") is driving session ${sessionId}, so your prompt was not sent: wait for it to finish (its control lapses 30 s after it last acts with no stream of the session open) and send it again, or take control from that client in the web UI (Take control) first`,
        },
      });
      await web.interrupt(sessionId);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });

  it("answers a prompt whose session/cancel was refused, another client having taken control, with why", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    const web = t.client({ client: "web-tab" });
    try {
      const sessionId = await newSlowEchoSession(editor);
      const answer = editor.ctx
        .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: manyWords }] })
        .then(
          (r) => ({ answered: r.stopReason }),
          (err: Refusal) => ({ code: err.code, data: err.data }),
        );
      await expect
        .poll(() => editor.updates.filter((u) => u.sessionId === sessionId).length)
        .toBeGreaterThan(0);
      await web.call("control", { id: sessionId }, { client: "web-tab" });
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      expect(await answer).toEqual({
        code: -32603,
        data: {
          reason: "controlled",
          controller: "web-tab",
          message: `another client ("web-tab") is driving session ${sessionId}, so session/cancel could not stop its turn, which goes on: wait for it to finish (its control lapses 30 s after it last acts with no stream of the session open) and send it again, or take control from that client in the web UI (Take control) first`,
        },
      });
      // The turn went on, driven from the web tab now.
      expect((await web.session(sessionId)).active_turn).toBeDefined();
      await web.interrupt(sessionId);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

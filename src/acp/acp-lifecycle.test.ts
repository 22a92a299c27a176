// `brain acp` when the other side goes: the editor hanging up mid-turn, the daemon going away mid-turn. Neither
// may leave a prompt or the process waiting for good.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { FsSessionStore, readEventsFile } from "../store/fs/index.js";
import { connectEditor, type TestEditor } from "../testing/acp-editor.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, settled } from "../testing/http.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const manyWords = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");

/** A slow echo turn's prompt, once its reply has begun to stream. */
async function promptStreaming({ ctx, updates }: TestEditor) {
  const { sessionId } = await ctx.request(methods.agent.session.new, {
    cwd: "/",
    mcpServers: [],
    _meta: { brain: { harness: "echo", config: { options: { delay_ms: 40 } } } },
  });
  const reply = ctx.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: manyWords }],
  });
  const streamed = () =>
    updates.some((n) => n.update.sessionUpdate === "agent_message_chunk" && JSON.stringify(n).includes("w2"));
  while (!streamed()) await sleep(20);
  return { sessionId, reply };
}

describe("brain acp when a side goes away", () => {
  // An editor hangs up (its end of stdin closes), or stops its agent server with a signal (then nothing closed the
  // turn: the process ended by the signal, its turn left open in the log).
  it.each([
    ["the editor hangs up", (editor: TestEditor) => editor.child.stdin!.end()],
    ["it is sent SIGTERM", (editor: TestEditor) => editor.child.kill("SIGTERM")],
  ])(
    "exits when %s mid-turn, its own daemon's turn interrupted rather than followed for good",
    async (_, stop) => {
      const home = mkdtempSync(join(tmpdir(), "brain-acp-"));
      const editor = await connectEditor(["--harness", "echo"], { env: { BRAIN_HOME: home } });
      try {
        const { sessionId, reply } = await promptStreaming(editor);
        reply.catch(() => {}); // the connection closes under it: no answer comes
        stop(editor);
        // It kept following the turn on its own daemon, closed meanwhile, retrying the stream for good.
        expect(await editor.exited).toBe(0);
        const events = await readEventsFile(new FsSessionStore(home).paths(sessionId).events, undefined, {
          after: 0,
          session: sessionId,
        });
        expect(events.flatMap((e) => (e.type === "turn.settled" ? [e.data.status] : []))).toEqual([
          "interrupted",
        ]);
      } finally {
        editor.child.kill("SIGKILL");
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  it("answers cancelled to session/cancel when the daemon went away mid-turn", async () => {
    const daemon = await startTestDaemon();
    const editor = await connectEditor(["--server", daemon.url, "--token", daemon.tokens.admin]);
    try {
      const { sessionId, reply } = await promptStreaming(editor);
      await daemon.daemon.close();
      await editor.ctx.notify(methods.agent.session.cancel, { sessionId });
      // ACP: after a cancel the prompt MUST be answered. It followed a stream that could not reconnect, for good.
      expect((await reply).stopReason).toBe("cancelled");
    } finally {
      editor.child.kill("SIGKILL");
      await daemon.cleanup();
    }
  });

  it("interrupts the turn it started when the daemon refuses to stream it, and answers the prompt with the reason", async () => {
    const daemon = await startTestDaemon({ eventStreamsPerTenant: 1 });
    const editor = await connectEditor(["--server", daemon.url, "--token", daemon.tokens.admin]);
    const held = new AbortController();
    try {
      // The tenant's one stream, taken by another client's watch of another session.
      const client = daemon.client();
      const other = await client.create({ harness: "echo" });
      await client.events(other.id, { signal: held.signal }).next();
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
        _meta: { brain: { harness: "echo", config: { options: { delay_ms: 40 } } } },
      });
      await expect(
        editor.ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: manyWords }],
        }),
      ).rejects.toMatchObject({ data: { message: expect.stringContaining("event streams open") } });
      held.abort();
      // It ran on to its end, unseen, with no one to ask should it need a permission.
      const [end] = (await collect(client, sessionId, settled())).filter((e) => e.type === "turn.settled");
      expect(end?.data).toMatchObject({ status: "interrupted" });
    } finally {
      held.abort();
      editor.child.kill("SIGKILL");
      await daemon.cleanup();
    }
  });

  it("exits 1 naming the limit when the editor sends a line over ACP's 32 MiB cap", async () => {
    const daemon = await startTestDaemon();
    const bin = join(import.meta.dirname, "../../bin/brain.js");
    const child = spawn(
      process.execPath,
      [bin, "acp", "--server", daemon.url, "--token", daemon.tokens.admin],
      {
        env: { ...process.env, BRAIN_URL: "", BRAIN_TOKEN: "" },
        stdio: ["pipe", "ignore", "pipe"],
      },
    );
    try {
      let stderr = "";
      child.stderr!.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.stdin!.on("error", () => {}); // it may exit before taking the whole line
      child.stdin!.write(Buffer.alloc(33 * 2 ** 20, "a"));
      expect(await exited).toBe(1);
      expect(stderr).toMatch(/over 32 MiB.*resource link/);
    } finally {
      child.kill("SIGKILL");
      await daemon.cleanup();
    }
  });
});

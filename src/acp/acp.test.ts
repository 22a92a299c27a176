// `brain acp` as a real process on stdio, driven by the ACP SDK's client side: initialize, session/new on a
// chosen harness, session/prompt streamed as session/update, permission requests answered in the "editor",
// session/cancel, session/load replaying the log, and errors for bad input.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import {
  type ClientContext,
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { installVersion } from "../core/install-root.js";
import { FsSessionStore } from "../store/fs/index.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const bin = join(import.meta.dirname, "../../bin/brain.js");
const t = useTestDaemon();

interface Editor {
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
  /** What the "person" picks when asked: an optionId, or "cancel". */
  pick: string;
  stderr: () => string;
}

/** Starts `brain acp ARGS` and runs `body` with an ACP client connected to it over stdio. */
async function withAgent<T>(
  args: string[],
  body: (ctx: ClientContext, editor: Editor) => Promise<T>,
  env: NodeJS.ProcessEnv = {},
): Promise<T> {
  const child: ChildProcess = spawn(process.execPath, [bin, "acp", ...args], {
    env: { ...process.env, BRAIN_URL: "", BRAIN_TOKEN: "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => {
    stderr += c;
  });
  const editor: Editor = { updates: [], permissions: [], pick: "allow", stderr: () => stderr };
  const app = client({ name: "test-editor" })
    .onNotification(methods.client.session.update, async ({ params }) => {
      editor.updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      editor.permissions.push(params);
      if (editor.pick === "cancel") return { outcome: { outcome: "cancelled" } };
      return { outcome: { outcome: "selected", optionId: editor.pick } };
    });
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
  );
  try {
    return await app.connectWith(stream, async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      });
      expect(init.protocolVersion).toBe(1);
      expect(init.agentCapabilities?.loadSession).toBe(true);
      return body(ctx, editor);
    });
  } finally {
    // Gone before the test removes its home: stopped by SIGTERM, it closes its daemon, writing there as it does.
    child.kill("SIGTERM");
    await exited;
  }
}

const server = () => ["--server", t.url, "--token", t.tokens.admin];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The statuses of a session's settled turns, in order. */
const settledTurns = async (sessionId: string) =>
  (await t.client().log(sessionId, 0, 1000)).events.flatMap((e) =>
    e.type === "turn.settled" ? [e.data.status] : [],
  );
/** An echo session slow enough that a cancel lands while it runs. */
const slowSession = (ctx: ClientContext) =>
  ctx.request(methods.agent.session.new, {
    cwd: "/",
    mcpServers: [],
    _meta: { brain: { harness: "echo", config: { options: { delay_ms: 40 } } } },
  });
const manyWords = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");
const textOf = (updates: SessionNotification[], kind = "agent_message_chunk") =>
  updates
    .map((n) => n.update)
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => (u as { content: { text?: string } }).content.text ?? "")
    .join("");

describe("brain acp", () => {
  it("creates a session on the harness _meta names, streams the reply, and replays it on session/load", async () => {
    const id = await withAgent(server(), async (ctx, editor) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: tmpdir(),
        mcpServers: [],
        _meta: { brain: { harness: "echo" } },
      });
      expect((await t.client().session(sessionId)).harness).toBe("echo");
      const reply = await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "hello acp" }],
      });
      expect(reply.stopReason).toBe("end_turn");
      expect(textOf(editor.updates)).toBe("echo #1: hello acp");
      const list = await ctx.request(methods.agent.session.list, {});
      expect(list.sessions).toContainEqual(expect.objectContaining({ sessionId, cwd: tmpdir() }));
      return sessionId;
    });
    await withAgent(server(), async (ctx, editor) => {
      await ctx.request(methods.agent.session.load, { sessionId: id, cwd: tmpdir(), mcpServers: [] });
      expect(textOf(editor.updates, "user_message_chunk")).toBe("hello acp");
      expect(textOf(editor.updates)).toBe("echo #1: hello acp");
    });
  });

  it("replays a compacted session's replies on session/load, each once", async () => {
    const id = await withAgent(server(), async (ctx) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: tmpdir(),
        mcpServers: [],
        _meta: { brain: { harness: "echo" } },
      });
      for (const text of ["one", "two"]) {
        await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
      }
      await ctx.request(methods.agent.session.close, { sessionId });
      return sessionId;
    });
    // Retention folds each completed turn's deltas into its message: the log keeps only the message's text.
    expect((await t.brain.compactIdle(0)).map((c) => c.id)).toContain(id);
    await withAgent(server(), async (ctx, editor) => {
      await ctx.request(methods.agent.session.load, { sessionId: id, cwd: tmpdir(), mcpServers: [] });
      expect(textOf(editor.updates, "user_message_chunk")).toBe("onetwo");
      expect(textOf(editor.updates)).toBe("echo #1: oneecho #2: two");
    });
  });

  it("asks the editor for permission and reports the tool call and its result", async () => {
    await withAgent(server(), async (ctx, editor) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
        _meta: {
          brain: { harness: "echo", config: { tools: ["echo"] }, permissions: { tools: { echo: "ask" } } },
        },
      });
      const reply = await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "echo: from the editor" }],
      });
      expect(reply.stopReason).toBe("end_turn");
      expect(editor.permissions).toHaveLength(1);
      expect(editor.permissions[0]!.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
      expect(editor.permissions[0]!.toolCall.rawInput).toEqual({ value: "from the editor" });
      const kinds = editor.updates.map((n) => n.update.sessionUpdate);
      expect(kinds).toContain("tool_call");
      const done = editor.updates.map((n) => n.update).find((u) => u.sessionUpdate === "tool_call_update");
      expect(done).toMatchObject({ status: "completed" });
      expect(textOf(editor.updates)).toContain("echo returned: from the editor");

      editor.pick = "deny";
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "echo: again" }],
      });
      const failed = editor.updates
        .map((n) => n.update)
        .filter((u) => u.sessionUpdate === "tool_call_update");
      expect(failed.at(-1)).toMatchObject({ status: "failed" });
    });
  });

  it("interrupts the turn on session/cancel: the prompt ends with stopReason cancelled", async () => {
    await withAgent(server(), async (ctx, editor) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
        _meta: { brain: { harness: "echo", config: { options: { delay_ms: 40 } } } },
      });
      const reply = ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: manyWords }],
      });
      while (!textOf(editor.updates).includes("w2")) await sleep(20);
      await ctx.notify(methods.agent.session.cancel, { sessionId });
      expect((await reply).stopReason).toBe("cancelled");
    });
  });

  it("answers cancelled to a session/cancel sent right after the prompt, and the turn does not complete", async () => {
    await withAgent(server(), async (ctx) => {
      const { sessionId } = await slowSession(ctx);
      const reply = ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: manyWords }],
      });
      await ctx.notify(methods.agent.session.cancel, { sessionId });
      expect((await reply).stopReason).toBe("cancelled");
      // Either the turn never started or it was interrupted: the reply came after its turn.settled, if any.
      expect(await settledTurns(sessionId)).not.toContain("completed");
    });
  });

  it("interrupts the running turn on a session/cancel sent while a second prompt on the session is on its way", async () => {
    await withAgent(server(), async (ctx, editor) => {
      const { sessionId } = await slowSession(ctx);
      const first = ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: manyWords }],
      });
      while (!textOf(editor.updates).includes("w2")) await sleep(20);
      const second = ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "meanwhile" }],
      });
      second.catch(() => {}); // cancelled before it reached the daemon, or refused there: a turn runs
      await ctx.notify(methods.agent.session.cancel, { sessionId });
      // The cancel was taken as the second prompt's alone: the first turn ran to its end.
      expect((await first).stopReason).toBe("cancelled");
      expect(await settledTurns(sessionId)).toEqual(["interrupted"]);
    });
  });

  it("interrupts the turn when the editor withdraws the prompt with $/cancel_request", async () => {
    await withAgent(server(), async (ctx, editor) => {
      const { sessionId } = await slowSession(ctx);
      const withdraw = new AbortController();
      const reply = ctx.request(
        methods.agent.session.prompt,
        { sessionId, prompt: [{ type: "text", text: manyWords }] },
        { cancellationSignal: withdraw.signal },
      );
      while (!textOf(editor.updates).includes("w2")) await sleep(20);
      withdraw.abort();
      // Answered once the daemon's turn has settled, interrupted rather than run on to the end.
      expect((await reply).stopReason).toBe("cancelled");
      expect(await settledTurns(sessionId)).toEqual(["interrupted"]);
    });
  });

  it("answers initialize with the protocol version it speaks when asked for one it does not, and the session methods it serves", async () => {
    await withAgent(server(), async (ctx) => {
      for (const asked of [0, PROTOCOL_VERSION + 1]) {
        const init = await ctx.request(methods.agent.initialize, {
          protocolVersion: asked,
          clientCapabilities: {},
        });
        expect(init.protocolVersion).toBe(PROTOCOL_VERSION);
        expect(init.agentCapabilities?.sessionCapabilities).toMatchObject({ list: {}, close: {} });
        expect(init.agentInfo?.version).toBe(installVersion());
      }
    });
  });

  it("answers bad input with JSON-RPC errors that say what is wrong", async () => {
    await withAgent(server(), async (ctx) => {
      await expect(
        ctx.request(methods.agent.session.new, {
          cwd: "/",
          mcpServers: [],
          _meta: { brain: { harness: "nope" } },
        }),
      ).rejects.toMatchObject({
        code: -32602,
        data: { message: expect.stringContaining('unknown harness "nope"') },
      });
      // A provider is a configured name; settings inline (a URL and a variable of the editor's choosing) are not.
      for (const provider of ["nope", { base_url: "http://127.0.0.1:1/v1", api_key_env: "PATH" }]) {
        await expect(
          ctx.request(methods.agent.session.new, {
            cwd: "/",
            mcpServers: [],
            _meta: { brain: { harness: "echo", provider } },
          }),
        ).rejects.toMatchObject({ code: -32602, data: { field: "_meta.brain.provider" } });
      }
      await expect(
        ctx.request(methods.agent.session.prompt, {
          sessionId: "ghost",
          prompt: [{ type: "text", text: "hi" }],
        }),
      ).rejects.toMatchObject({ code: -32002 });
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
      await expect(
        ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "audio", mimeType: "audio/wav", data: "AAAA" }],
        }),
      ).rejects.toMatchObject({
        code: -32602,
        data: {
          message: expect.stringContaining("a block of type audio cannot be sent"),
          field: "prompt[0]",
        },
      });
      const blob = { uri: "file:///a.bin", mimeType: "application/octet-stream", blob: "AAAA" };
      await expect(
        ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [
            { type: "text", text: "see" },
            { type: "resource", resource: blob },
          ],
        }),
      ).rejects.toMatchObject({
        code: -32602,
        data: { message: expect.stringContaining("binary content (blob)"), field: "prompt[1]" },
      });
      await expect(
        ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [
            { type: "text", text: "look" },
            { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
          ],
        }),
      ).rejects.toMatchObject({
        code: -32602,
        data: { message: expect.stringContaining("does not take images") },
      });
    });
  });

  it("refuses a _meta.brain field of the wrong type or one it does not take, naming it, rather than making a session without it", async () => {
    await withAgent(server(), async (ctx) => {
      const fields: [unknown, string][] = [
        [{ harness: "echo", permissions: "ask" }, "_meta.brain.permissions"],
        [{ harness: "echo", config: "x" }, "_meta.brain.config"],
        [{ harness: 5 }, "_meta.brain.harness"],
        [{ agent: 7 }, "_meta.brain.agent"],
        ["echo", "_meta.brain"],
        // A typo made a session on the default harness.
        [{ harnes: "echo" }, "_meta.brain.harnes"],
      ];
      const before = (await t.client().sessions()).length;
      for (const [brain, field] of fields) {
        await expect(
          ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [], _meta: { brain } }),
        ).rejects.toMatchObject({ code: -32602, data: { field } });
      }
      expect(await t.client().sessions()).toHaveLength(before);
      // A null _meta.brain is none: the command line's choice.
      await expect(
        ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [], _meta: { brain: null } }),
      ).resolves.toMatchObject({ _meta: { brain: { harness: "echo" } } });
    });
  });

  it("refuses a prompt too large for a runner frame with invalid params naming the limit", async () => {
    await withAgent(server(), async (ctx) => {
      const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
      await expect(
        ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "x".repeat(5 << 20) }],
        }),
      ).rejects.toMatchObject({
        code: -32602,
        data: { message: expect.stringContaining("a runner frame is at most 4 MiB") },
      });
    });
  });

  it("runs its own daemon over $BRAIN_HOME when no --server is given", async () => {
    const home = mkdtempSync(join(tmpdir(), "brain-acp-"));
    try {
      await withAgent(
        ["--harness", "echo"],
        async (ctx, editor) => {
          const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
          await ctx.request(methods.agent.session.prompt, {
            sessionId,
            prompt: [{ type: "text", text: "embedded" }],
          });
          expect(textOf(editor.updates)).toBe("echo #1: embedded");
          // The sessions as the store reads them, not sessions/'s entries: a host with warm runners keeps a spare
          // session directory too (src/store/fs/session-slot.ts), made a second after a create, which a raw
          // listing counted as a second session whenever the turn took that long.
          expect((await new FsSessionStore(home).list()).map((s) => s.id)).toEqual([sessionId]);
        },
        { BRAIN_HOME: home },
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

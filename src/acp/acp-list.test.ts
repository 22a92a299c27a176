// `brain acp`'s session/list: paged as ACP's schema says (cursor in, nextCursor out), newest first, so a home
// with thousands of sessions is not one huge message.
import fsp from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { methods, RequestError } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { FsSessionStore } from "../store/fs/index.js";
import { connectEditor } from "../testing/acp-editor.js";
import { madeSession } from "../testing/made-session.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

describe("brain acp session/list", () => {
  it("pages the sessions, newest first, with a nextCursor until the last page, and names a bad cursor", async () => {
    const store = new FsSessionStore(t.home);
    const ids = Array.from({ length: 230 }, (_, i) => `list-${String(i).padStart(3, "0")}`);
    for (const id of ids) await madeSession(store, { harness: "echo", config: {}, id });
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const page = await editor.ctx.request(methods.agent.session.list, cursor ? { cursor } : {});
        pages.push(page.sessions.map((s) => s.sessionId));
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      expect(pages.map((p) => p.length)).toEqual([100, 100, 30]);
      expect(pages.flat()).toEqual([...ids].reverse());

      const refused = await editor.ctx
        .request(methods.agent.session.list, { cursor: "no such session" })
        .catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(RequestError);
      expect(refused).toMatchObject({ code: -32602 });
      expect(JSON.stringify((refused as RequestError).data)).toContain("list again without a cursor");
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

describe("brain acp session/list's updatedAt", () => {
  it("is when the session's log was last written, not when it was made; the REST view says it as updated_at", async () => {
    const store = new FsSessionStore(t.home);
    const record = await madeSession(store, { harness: "echo", config: {}, id: "dated-by-log" });
    const written = new Date("2031-02-03T04:05:06.000Z");
    await fsp.utimes(store.paths(record.id).events, written, written);
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const page = await editor.ctx.request(methods.agent.session.list, {});
      const listed = page.sessions.find((s) => s.sessionId === record.id);
      expect(listed?.updatedAt).toBe(written.toISOString());
      expect(record.created_at).not.toBe(written.toISOString());
      expect((await t.client().session(record.id)).updated_at).toBe(written.toISOString());
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

describe("brain acp's editor cwd", () => {
  it("is the session's, kept across a restart of brain acp; a load from a directory gone since is refused, named", async () => {
    const project = await fsp.mkdtemp(join(tmpdir(), "w19f-acp-project-"));
    const args = ["--server", t.url, "--token", t.tokens.admin];
    const first = await connectEditor(args);
    let sessionId: string;
    try {
      const made = await first.ctx.request(methods.agent.session.new, {
        cwd: project,
        mcpServers: [],
        _meta: { brain: { harness: "echo" } },
      });
      sessionId = made.sessionId;
    } finally {
      first.child.kill("SIGTERM");
      await first.exited;
    }
    const second = await connectEditor(args);
    try {
      const all = await second.ctx.request(methods.agent.session.list, {});
      expect(all.sessions.find((s) => s.sessionId === sessionId)?.cwd).toBe(project);
      const here = await second.ctx.request(methods.agent.session.list, { cwd: project });
      expect(here.sessions.map((s) => s.sessionId)).toEqual([sessionId]);
      await second.ctx.request(methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] });

      await fsp.rm(project, { recursive: true });
      const refused = await second.ctx
        .request(methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] })
        .catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(RequestError);
      expect(refused).toMatchObject({ code: -32602 });
      expect(JSON.stringify((refused as RequestError).data)).toContain("is not an existing directory");
    } finally {
      second.child.kill("SIGTERM");
      await second.exited;
      await fsp.rm(project, { recursive: true, force: true });
    }
  });

  it("keeps the editor's directory on a fork and a handoff, so session/list there shows them", async () => {
    const client = t.client();
    const cwd = tmpdir();
    const source = await client.create({ harness: "echo", editor_cwd: cwd });
    await client.prompt(source.id, "hello");
    const settled = async () =>
      (await client.log(source.id, 0, 100)).events.some((e) => e.type === "turn.settled");
    await expect.poll(settled, { timeout: 60_000 }).toBe(true);
    await client.checkpoint(source.id);
    const fork = await client.fork(source.id);
    const handoff = await client.handoff(source.id, "echo");
    expect((await client.session(fork.id)).editor_cwd).toBe(cwd);
    expect((await client.session(handoff.id)).editor_cwd).toBe(cwd);
  });
});

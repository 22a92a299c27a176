// `brain acp`'s cwd as ACP's schema has it: session/new's, session/load's and session/list's cwd "Must be an
// absolute path". A relative one was taken: session/new recorded it as the session's directory, session/list gave it
// back as a SessionInfo.cwd (which must be absolute too), and session/load resolved it against `brain acp`'s own
// directory, so "." loaded the session in whatever directory the editor started it from.
import { tmpdir } from "node:os";
import { methods, RequestError } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor } from "../testing/acp-editor.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

/** What a request was refused with: invalid params naming cwd and saying it must be absolute. */
const refusedRelative = {
  code: -32602,
  data: { field: "cwd", message: expect.stringContaining("not an absolute path") },
};

describe("brain acp's cwd", () => {
  it("is refused, named, when it is not an absolute path: on session/new, session/load and session/list", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const made = await editor.ctx
        .request(methods.agent.session.new, {
          cwd: "project",
          mcpServers: [],
          _meta: { brain: { harness: "echo" } },
        })
        .catch((err: unknown) => err);
      expect(made).toBeInstanceOf(RequestError);
      expect(made).toMatchObject(refusedRelative);
      expect((await t.client().sessions()).map((s) => s.editor_cwd)).not.toContain("project");

      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: tmpdir(),
        mcpServers: [],
        _meta: { brain: { harness: "echo" } },
      });
      // "." is a directory wherever `brain acp` runs: it was loaded there.
      for (const cwd of [".", "project"]) {
        await expect(
          editor.ctx.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] }),
        ).rejects.toMatchObject(refusedRelative);
      }
      await expect(editor.ctx.request(methods.agent.session.list, { cwd: "." })).rejects.toMatchObject(
        refusedRelative,
      );
      // An absolute one is taken as before.
      await editor.ctx.request(methods.agent.session.load, { sessionId, cwd: tmpdir(), mcpServers: [] });
      const listed = await editor.ctx.request(methods.agent.session.list, { cwd: tmpdir() });
      expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

// `brain acp` names a field the daemon refused by where it is in the editor's request. The daemon names its own
// body's fields (a prompt's images.1.data): an ACP prompt has no images field, only its content blocks, so the
// editor could not tell which attachment to fix.
import { type ContentBlock, methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor } from "../testing/acp-editor.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const png = "iVBORw0KGgo=";

describe("brain acp's refused fields", () => {
  it("names a prompt's image the daemon refused by its block in the prompt", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
      const refused = (prompt: ContentBlock[]) =>
        editor.ctx.request(methods.agent.session.prompt, { sessionId, prompt }).then(
          () => "answered",
          (err: { code: number; data: { field?: string; message: string } }) => err,
        );
      // The second image (the daemon's images.1) is the prompt's third block.
      const empty = await refused([
        { type: "image", mimeType: "image/png", data: png },
        { type: "text", text: "compare" },
        { type: "image", mimeType: "image/png", data: "" },
      ]);
      expect(empty).toMatchObject({ code: -32602, data: { field: "prompt[2].data" } });
      expect(empty).toMatchObject({ data: { message: expect.stringContaining('"prompt[2].data"') } });
      expect(JSON.stringify(empty)).not.toContain("images");
      // An echo session takes no images: the first one sent is named.
      const untaken = await refused([
        { type: "text", text: "look" },
        { type: "image", mimeType: "image/png", data: png },
      ]);
      expect(untaken).toMatchObject({
        code: -32602,
        data: { field: "prompt[1]", message: expect.stringContaining("does not take images") },
      });
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });

  it("refuses a sessionId that cannot be a session's, naming the field, on session/prompt, load and close", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      // Sent as given, each reached the daemon as another path ("/v1/sessions/", "/v1/" for ".."): "no route GET /v1/".
      for (const sessionId of ["", ".", ".."]) {
        const answers = [];
        for (const request of [
          () =>
            editor.ctx.request(methods.agent.session.prompt, {
              sessionId,
              prompt: [{ type: "text", text: "hi" }],
            }),
          () => editor.ctx.request(methods.agent.session.load, { sessionId, cwd: "/", mcpServers: [] }),
          () => editor.ctx.request(methods.agent.session.close, { sessionId }),
        ])
          answers.push(
            await request().then(
              () => "answered",
              (err: unknown) => err,
            ),
          );
        for (const answer of answers) {
          expect(answer).toMatchObject({
            code: -32602,
            data: { field: "sessionId", message: expect.stringContaining("is not a session id") },
          });
        }
      }
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });

  it("names a session/new field the daemon refused where the editor gave it: under _meta.brain, or cwd", async () => {
    const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
    try {
      const refused = (meta: Record<string, unknown>, cwd = "/") =>
        editor.ctx.request(methods.agent.session.new, { cwd, mcpServers: [], _meta: meta }).then(
          () => "answered",
          (err: unknown) => err,
        );
      const wrongType = await refused({ brain: { harness: "echo", config: { model: 5 } } });
      expect(wrongType).toMatchObject({
        code: -32602,
        data: {
          field: "_meta.brain.config.model",
          message: expect.stringContaining('"_meta.brain.config.model"'),
        },
      });
      // _meta itself, as brainMeta takes it when there is no _meta.brain.
      expect(await refused({ harness: "nope" })).toMatchObject({
        code: -32602,
        data: { field: "_meta.harness", message: expect.stringContaining('unknown harness "nope"') },
      });
      // The daemon's editor_cwd is the editor's cwd.
      expect(await refused({}, `/${"a".repeat(5000)}`)).toMatchObject({
        code: -32602,
        data: { field: "cwd", message: expect.stringContaining("at most 4096 characters") },
      });
    } finally {
      editor.child.kill("SIGTERM");
      await editor.exited;
    }
  });
});

// A session's question asked of the editor through `brain acp`: one with options goes out as
// session/request_permission, one option per answer, and only an option it was offered answers it.
import { methods } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { connectEditor } from "../testing/acp-editor.js";
import { scripted } from "../testing/brain.js";
import { startTestDaemon } from "../testing/daemon.js";

describe("brain acp asking the editor a question", () => {
  it("answers with the option the editor picked, and with none for an option id it was not offered", async () => {
    const answers: string[] = [];
    const questioning = scripted(async (options, turn) => {
      const question = { question: "Delete the branch?", options: ["yes", "no"] };
      answers.push(await options.ask(turn, question, new AbortController().signal));
    });
    const daemon = await startTestDaemon({ factories: [questioning] });
    let pick = "";
    const editor = await connectEditor(["--server", daemon.url, "--token", daemon.tokens.admin], {
      pick: () => ({ outcome: "selected", optionId: pick }),
    });
    try {
      const { sessionId } = await editor.ctx.request(methods.agent.session.new, {
        cwd: "/",
        mcpServers: [],
        _meta: { brain: { harness: "scripted" } },
      });
      // "allow" and "bogus" were read as option 0 ("yes"): the id's number was cut off after "option-".
      for (const optionId of ["option-1", "option-0", "allow", "bogus"]) {
        pick = optionId;
        await editor.ctx.request(methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "go" }],
        });
      }
      expect(editor.permissions[0]!.options.map((o) => o.name)).toEqual(["yes", "no", "Skip"]);
      expect(answers).toEqual(["no", "yes", "", ""]);
      const { events } = await daemon.client().log(sessionId, 0, 1000);
      const reasons = events.flatMap((e) => (e.type === "question.answered" ? [e.data.reason ?? ""] : []));
      expect(reasons.slice(2)).toEqual([
        'the editor picked an option it was not offered ("allow")',
        'the editor picked an option it was not offered ("bogus")',
      ]);
    } finally {
      editor.child.kill("SIGKILL");
      await daemon.cleanup();
    }
  });
});

// The secret path segment of a host's NUI_API_URL reaches its sessions' HITL requests. Whatever the host writes
// itself (its text, its tool calls, its error events), not only its stderr, goes into the session's log: the
// session's redactor knows the token from the moment the host starts.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { events } from "../../testing/brain.js";
import { catalogFactories, useScratch, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const { scratch, brain: scratchBrain } = useScratch();

// Says where nui's REST API is in every way a host can speak, then reports it in an error event.
const TELLING_RUN = `
    def run(self, message, run_id, **kwargs):
        url = os.environ["NUI_API_URL"]
        yield "my url is " + url + " ok"
        self.emit({"type": "tool_call", "toolCallId": "c1", "name": "fetch", "args": {"url": url}})
        self.emit({"type": "tool_result", "toolCallId": "c1", "content": "fetched " + url})
        self.emit({"type": "error", "error": "could not reach " + url + "/api/hitl/requests"})
`;

const HOSTS = {
  stdio: `import os\nfrom nui_agent_stdio import NuiAgent\nclass Telling(NuiAgent):${TELLING_RUN}Telling().serve_stdio()\n`,
  tcp: `import os\nfrom nui_agent import NuiAgent\nclass Telling(NuiAgent):${TELLING_RUN}Telling().serve()\n`,
};

it.each(["stdio", "tcp"] as const)(
  "what a %s host writes itself never carries the secret path of its NUI_API_URL into the log",
  async (transport) => {
    const src = writeExtension(scratch("brain-ext-src-"), "telling", {
      transport,
      command: ["python3", "host.py"],
    });
    writeFileSync(join(src, "host.py"), HOSTS[transport]);
    const home = scratch("brain-ext-home-");
    await installExtension(src, join(home, "extensions"));
    const { factories } = catalogFactories({ brainHome: home, hostHome: scratch("brain-ext-hosthome-") });
    const { brain } = scratchBrain({ factories, home });
    // Both sessions of a shared host: the host's token reaches them both.
    for (const _ of [1, 2]) {
      const session = await brain.create({ harness: "ext:telling/echo" });
      const turn = await session.prompt("hi");
      expect((await turn.settled).status).toBe("failed");
      const logged = JSON.stringify(await events(session));
      expect(logged).toMatch(/my url is http:\/\/127\.0\.0\.1:\d+\/\[redacted:NUI_API_URL token\] ok/);
      expect(logged).toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/\[redacted:NUI_API_URL token\]"/);
      expect(logged).toMatch(
        /could not reach http:\/\/127\.0\.0\.1:\d+\/\[redacted:NUI_API_URL token\]\/api/,
      );
      expect(logged).not.toMatch(/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{20,}/);
    }
  },
);

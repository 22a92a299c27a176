// nui's respond() on a request of several questions that the harness raised itself (not through this API): an
// extension host's ask_user(), over the protocol or through its own NUI_API_URL. One body answers every question.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { installExtension } from "../harnesses/ext/install.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled, textOf } from "../testing/http.js";
import { catalogFactories, useScratch, writeExtension } from "../testing/nui.js";

const { scratch, cleanups } = useScratch();

const HOST = `
import json
from nui_agent_stdio import NuiAgent
class Asker(NuiAgent):
    def run(self, message, run_id, **kwargs):
        resp = self.ask_user(questions=[{"question": "Colour?"}, {"question": "Size?"}])
        yield json.dumps({"status": resp.get("status"), "answers": resp.get("answers")}, sort_keys=True)
Asker().serve_stdio()
`;

async function daemonWithAsker() {
  const src = writeExtension(scratch("brain-ext-src-"), "asker", { command: ["python3", "host.py"] });
  writeFileSync(join(src, "host.py"), HOST);
  const home = scratch("brain-ext-home-");
  await installExtension(src, join(home, "extensions"));
  const { factories, problems } = catalogFactories({ brainHome: home, hostHome: scratch("brain-ext-hh-") });
  expect(problems).toEqual([]);
  const t = await startTestDaemon({ factories, home });
  cleanups.push(() => t.cleanup());
  return t;
}

describe("a several-question request an extension host raised", () => {
  for (const [how, env] of [
    ["over the protocol (hitl_request)", { NUI_API_URL: "" }],
    ["through its NUI_API_URL", {}],
  ] as const) {
    it(`is answered whole by one respond, ${how}`, async () => {
      const t = await daemonWithAsker();
      const client = t.client();
      // The operator's env (a client may set none): made on the Brain, then driven over HTTP.
      const { id } = await t.brain.create({ harness: "ext:asker/echo", config: { options: { env } } });
      const { turn } = await client.prompt(id, "ask");
      let asked = 0;
      const seen = await collect(client, id, (e) => e.type === "question.requested" && ++asked === 2);
      const first = seen.find((e) => e.type === "question.requested")!.data as { id: string };
      const answers = { "Colour?": "red", "Size?": "large" };
      const responded = await raw(t.url, "POST", `/api/hitl/requests/${first.id}/respond`, {
        token: t.tokens.admin,
        body: { status: "answered", answers },
      });
      expect(responded.status, JSON.stringify(responded.body)).toBe(200);
      // Both answered by that one body: none is left to wait until it expires.
      expect((await client.session(id)).pending ?? []).toEqual([]);
      const events = await collect(client, id, settled(turn));
      expect(JSON.parse(textOf(events))).toEqual({ status: "answered", answers });
    });
  }
});

// Cluster mode: commands for a session another node owns wait for that owner, and a frozen owner keeps its lease
// (so is tried again) for up to a TTL. One tenant could pile up such waits without end, each holding a socket
// and its body; now past forwardsPerTenant the next is refused with 429, other tenants unaffected.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { raw } from "../testing/http.js";
import type { CommandRouter } from "./routing.js";

let owner = () => {};
let reached = 0;
const answered = new Promise<void>((resolve) => (owner = resolve));
/** Another node owns session "elsewhere" and is frozen: it answers once `owner()` is called. */
const router: CommandRouter = {
  serve: () => () => {},
  async forward(session) {
    if (session !== "elsewhere") return undefined;
    reached++;
    await answered;
    return { status: 202, contentType: "application/json", body: '{"owner":"other"}' };
  },
  serveLocate: () => () => {},
  locate: async () => undefined,
};

let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({ router, forwardsPerTenant: 2 });
});
afterAll(() => d.cleanup());

const prompt = (token: string) =>
  raw(d.url, "POST", "/v1/sessions/elsewhere/prompt", { token, body: { text: "hi" } });

it("refuses a tenant's command past its bound of commands waiting on an owner, and frees the places after", async () => {
  const waiting = [prompt(d.tokens.admin), prompt(d.tokens.admin)];
  while (reached < 2) await new Promise((resolve) => setImmediate(resolve));
  const refused = await prompt(d.tokens.admin);
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({ code: "limit_reached" });
  expect(String((refused.body.error as { message: string }).message)).toContain(
    "waiting on the sessions' owners",
  );
  // Another tenant's command is not refused for it.
  const other = prompt(d.tokens.other);
  while (reached < 3) await new Promise((resolve) => setImmediate(resolve));
  owner();
  for (const res of [...(await Promise.all(waiting)), await other]) expect(res.status).toBe(202);
  expect((await prompt(d.tokens.admin)).status).toBe(202);
});

// The web UI while its event stream is refused and an action is taken, in a real browser: the reason the stream
// is down and an action's failure are each shown for as long as they hold, neither wiping out the other.
import { describe, expect, it } from "vitest";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon({ eventStreamsPerTenant: 1 });
const browser = useTestBrowser();

describe("web UI acting on a session while its stream is refused", () => {
  it("keeps the stream's reason, and the action's failure, through each other", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    // The tenant's one stream, held open by another reader.
    const abort = new AbortController();
    const held = (async () => {
      try {
        for await (const _ of client.events(id, { signal: abort.signal })) {
        }
      } catch {}
    })();
    // An observer's page: its actions are refused.
    const page = await browser.newPage();
    const said = async () => (await page.locator("#session .error").allTextContents()).join("\n");
    try {
      await page.goto(`${t.url}/#token=${t.tokens.observer}&session=${id}`);
      await expect.poll(said).toContain("event_streams_per_tenant");
      const refused = page.waitForResponse((res) => res.url().endsWith("/checkpoints"));
      await page.click("#checkpoint");
      expect((await refused).status()).toBe(403);
      // The stream's next try, refused again, is read after the action's failure was shown.
      const retried = page.waitForResponse((res) => res.url().includes(`/v1/sessions/${id}/events`));
      expect((await retried).status()).toBe(429);
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      const both = await said();
      expect(both).toContain("event_streams_per_tenant");
      expect(both).toMatch(/observer|forbidden|control/i);
      // Another action, which clears its own failure, leaves the stream's reason: the stream is still down.
      const again = page.waitForResponse((res) => res.url().endsWith("/checkpoints"));
      await page.click("#checkpoint");
      await again;
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      expect(await said()).toContain("event_streams_per_tenant");
      expect(await page.locator("#conn").textContent()).toBe("reconnecting…");
      abort.abort();
      await held;
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await expect.poll(said).not.toContain("event_streams_per_tenant");
    } finally {
      abort.abort();
      await page.close();
    }
  });
});

// The web UI's session head against the list's refresh, in a real browser: a list read before an action (Close)
// and answered after it does not put the session's older status back at the top of the page.
import type { Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI when the list's refresh is answered after a Close", () => {
  it("keeps the closed status the Close answered with", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#s-status").textContent()).toBe("idle");
      // The list's next refresh is answered by the daemon before the Close and held on its way to the page.
      let held: Route | undefined;
      let listed: Awaited<ReturnType<Route["fetch"]>> | undefined;
      await page.route(
        (url) => url.pathname === "/v1/sessions",
        async (route) => {
          if (held || route.request().method() !== "GET") return route.continue();
          listed = await route.fetch();
          held = route;
        },
      );
      await expect.poll(() => held !== undefined).toBe(true);
      await page.click("#close");
      await expect.poll(() => page.locator("#s-status").textContent()).toBe("closed");
      const answered = page.waitForResponse((res) => res.url().includes("/v1/sessions?"));
      await held!.fulfill({ response: listed! });
      await answered;
      // A call of the page's own, answered, comes after it has read the list.
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      expect(await page.locator("#s-status").textContent()).toBe("closed");
    } finally {
      await page.close();
    }
  });
});

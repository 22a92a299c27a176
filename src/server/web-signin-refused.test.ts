// The web UI when its token is refused while it is still signing in, in a real browser: the sign-in stops where it
// is, and the page says the token was refused, not the error of a step that went on without the token.
import { describe, expect, it } from "vitest";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI refused its token while signing in", () => {
  it("says the token was refused, and goes on no further", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    try {
      // The token is revoked between the sign-in's first calls and its session list: the daemon's own refusal of
      // a token it does not know stands for it (a daemon's tokens change only across a restart).
      let refused = false;
      await page.route(
        (url) => url.pathname === "/v1/sessions",
        async (route) => {
          refused = true;
          const headers = { ...route.request().headers(), authorization: "Bearer a-token-revoked-meanwhile" };
          await route.fulfill({ response: await route.fetch({ headers }) });
        },
      );
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => refused).toBe(true);
      await expect.poll(() => page.locator("#login").isVisible()).toBe(true);
      // A call of the page's own, answered, comes after what the sign-in did with the refusal.
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      expect(await page.locator("#login-error").textContent()).toContain("no longer accepts this token");
      expect(await page.locator("#main").isVisible()).toBe(false);
      expect(await page.locator("#s-title").textContent()).not.toBe(id);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

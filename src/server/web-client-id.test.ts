// The web UI's client id (X-Brain-Client, who holds control of a session) across tabs, in a real browser: a
// reload keeps it, so control survives the reload; a window opened from the page (which gets a copy of its
// sessionStorage, as a duplicated tab does) makes its own, or the two tabs would act as one client.
import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI's client id", () => {
  it("is kept by a reload and not shared with a window opened from the page", async () => {
    const context = await browser.newContext();
    /** The X-Brain-Client headers each page sent to the API. */
    const sent = new Map<Page, Set<string>>();
    context.on("request", (req: Request) => {
      const client = req.headers()["x-brain-client"];
      if (!client || !new URL(req.url()).pathname.startsWith("/v1/")) return;
      const page = req.frame().page();
      sent.set(page, (sent.get(page) ?? new Set()).add(client));
    });
    const clients = (page: Page) => [...(sent.get(page) ?? [])];
    try {
      const { id } = await t.client().create({ harness: "echo" });
      const page = await context.newPage();
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await page.locator("#session").waitFor();
      await expect.poll(() => clients(page).length).toBe(1);
      const [mine] = clients(page);

      await page.reload();
      await page.locator("#session").waitFor();
      await page.evaluate(() => fetch("/healthz").then((res) => res.status));
      expect(clients(page)).toEqual([mine]);

      const opened = context.waitForEvent("page");
      // (A string: the test runs under Node's types, not the DOM's.)
      await page.evaluate("void window.open(location.href)");
      const other = await opened;
      await other.locator("#session").waitFor();
      await expect.poll(() => clients(other).length).toBe(1);
      expect(clients(other)).not.toContain(mine);

      // The page it was opened from keeps its own, across another reload too.
      await page.reload();
      await page.locator("#session").waitFor();
      await page.evaluate(() => fetch("/healthz").then((res) => res.status));
      expect(clients(page)).toEqual([mine]);
    } finally {
      await context.close();
    }
  });
});

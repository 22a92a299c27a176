// The web UI's session head as the user acts on it, in a real browser: after "Take control" the head says the page
// controls the session, without a reload.
import { describe, expect, it } from "vitest";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI's head after Take control", () => {
  it("says the page controls the session once it took control, also one older than the list shows", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    await t.client({ client: "the-cli" }).takeControl(id, "the-cli");
    // The list shows the newest 100: the head's session, opened by its link, is not among them.
    for (let i = 0; i < 100; i++) await t.client().create({ harness: "echo" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#s-control").textContent()).toBe("controlled by the-cli");
      await page.click("#take-control");
      await expect.poll(() => page.locator("#s-control").textContent()).toBe("you control it");
      expect(await page.locator("#take-control").isHidden()).toBe(true);
    } finally {
      await page.close();
    }
  });
});

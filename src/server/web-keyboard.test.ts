// The web UI from the keyboard alone, in a real browser: a session of the list is reached with Tab and opened
// with Enter, and the list's refresh every few seconds does not take the focus away from it.
import { describe, expect, it } from "vitest";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI's session list from the keyboard", () => {
  it("opens a session on Enter, the focus kept across the list's refresh", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}`);
      const entry = page.locator(`#sessions li[data-session="${id}"]`);
      await entry.waitFor();
      // (A string: the test runs under Node's types, not the DOM's.)
      const focusedSession = () => page.evaluate('document.activeElement?.getAttribute("data-session")');
      // Where Tab stops: an entry that cannot take the focus is skipped by it.
      await entry.focus();
      await expect.poll(focusedSession).toBe(id);
      // The list's next refresh makes its entries anew.
      await page.waitForResponse((res) => new URL(res.url()).pathname === "/v1/sessions");
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      expect(await focusedSession()).toBe(id);
      await page.keyboard.press("Enter");
      await expect.poll(() => page.locator("#s-title").textContent()).toBe(id);
    } finally {
      await page.close();
    }
  });
});

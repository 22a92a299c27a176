// The web UI from the keyboard alone, in a real browser: a session of the list is reached with Tab and opened
// with Enter, and the list's refresh every few seconds does not take the focus away from it; Ctrl-Enter sends what
// is typed the one way the session takes it now.
import { describe, expect, it } from "vitest";
import { collect, settled } from "../testing/http.js";
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

describe("web UI's composer from the keyboard", () => {
  it("Ctrl-Enter while a turn runs steers it, as the Steer button does, instead of a prompt the daemon refuses", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 40 } } });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await page.locator("#session").waitFor();
      await page.fill("#prompt", Array.from({ length: 300 }, (_, i) => `w${i}`).join(" "));
      await page.press("#prompt", "Control+Enter");
      await expect.poll(() => page.locator("#turn-state").textContent()).toBe("turn running…");
      await page.fill("#prompt", "go left");
      await page.press("#prompt", "Control+Enter");
      await expect.poll(() => page.inputValue("#prompt")).toBe("");
      const logged = async () => (await client.log(id, 0, 10_000)).events;
      await expect
        .poll(async () => (await logged()).filter((e) => e.type === "user.steer").map((e) => e.data.text))
        .toEqual(["go left"]);
      expect((await logged()).filter((e) => e.type === "user.prompt")).toHaveLength(1);
      expect(await page.locator("#s-error").textContent()).toBe("");
      await page.click("#interrupt");
      await collect(client, id, settled());
    } finally {
      await page.close();
    }
  });
});

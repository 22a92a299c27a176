// The web UI's composer across sessions, in a real browser: a draft belongs to the session it was typed for.
// Opening another session keeps it with its own and shows the other's (empty if none), so what was typed for one
// session is never sent to another; drafts are kept in the page's memory only, not in the browser's storage.
import { describe, expect, it } from "vitest";
import { sessionOpener, useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI's composer when another session is opened", () => {
  it("keeps each session's draft with it, and sends it to that one", async () => {
    const client = t.client();
    const first = (await client.create({ harness: "echo" })).id;
    const second = (await client.create({ harness: "echo" })).id;
    const page = await browser.newPage();
    const open = sessionOpener(page, t.url);
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${first}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await page.fill("#prompt", "meant for the first session");
      await open(second);
      expect(await page.locator("#prompt").inputValue()).toBe("");
      await page.fill("#prompt", "meant for the second session");
      await open(first);
      expect(await page.locator("#prompt").inputValue()).toBe("meant for the first session");
      // In memory only: a draft may hold a secret, which the browser's storage would keep on disk.
      const stored = await page.evaluate(() => {
        type Storage = { length: number; key(i: number): string | null; getItem(k: string): string | null };
        const w = globalThis as unknown as { localStorage: Storage; sessionStorage: Storage };
        const all = (s: Storage) =>
          Array.from({ length: s.length }, (_, i) => `${s.key(i)}=${s.getItem(s.key(i) ?? "")}`);
        return [...all(w.localStorage), ...all(w.sessionStorage)].join("\n");
      });
      expect(stored).not.toContain("meant for");
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const sent = page.waitForRequest((req) => req.url().endsWith("/prompt"));
      await page.click("#send");
      expect(new URL((await sent).url()).pathname).toBe(`/v1/sessions/${first}/prompt`);
      await expect
        .poll(() => page.locator("#transcript").textContent())
        .toContain("echo #1: meant for the first session");
      expect(await page.locator("#prompt").inputValue()).toBe("");
      await open(second);
      expect(await page.locator("#prompt").inputValue()).toBe("meant for the second session");
      // The draft sent is gone from its session: back on it, the box is empty.
      await open(first);
      expect(await page.locator("#prompt").inputValue()).toBe("");
    } finally {
      await page.close();
    }
  });
});

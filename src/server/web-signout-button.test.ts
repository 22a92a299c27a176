// Signing out of the web UI, in a real browser: the page kept its token in the browser's storage for good, with
// no way to leave but clearing the site's data by hand, so the next user of a shared machine opened the daemon's
// address and was signed in as the last one, transcripts and all. Sign out forgets the token, leaves the page
// empty, and a reload asks for a token again; the browser's other tabs, signed in with the token it kept, leave
// with it.
import { describe, expect, it } from "vitest";
import { collect, settled } from "../testing/http.js";
import { keptToken, useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI signing out", () => {
  it("forgets the token, shows nothing of the tenant, and asks for a token after a reload", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const { turn } = (await client.prompt(id, "a private prompt")) as { turn: string };
    await collect(client, id, settled(turn));
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await expect.poll(() => page.locator("#transcript").textContent()).toContain("a private prompt");
      expect(await keptToken(page)).toBe(t.tokens.admin);
      expect(await page.locator("#sign-out").count()).toBe(1);
      await page.locator("#sign-out").click();
      await expect.poll(() => page.locator("#login").isVisible()).toBe(true);
      expect(await page.locator("#main").isVisible()).toBe(false);
      expect(await page.locator("#sign-out").isVisible()).toBe(false);
      expect(await keptToken(page)).toBeNull();
      expect(await page.locator("#transcript").textContent()).toBe("");
      expect(await page.locator("#sessions li").count()).toBe(0);
      expect(await page.locator("#who").textContent()).toBe("");
      // Nor which session was open: the address would open it for the next one to sign in.
      expect(new URL(page.url()).hash).toBe("");
      await page.reload();
      await page.locator("#login").waitFor();
      expect(await page.locator("#main").isVisible()).toBe(false);
      expect(await page.locator("#login-error").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });

  it("signs this browser's other tabs out too", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    // One browser (one storage), two tabs: the second signs in with the token the first kept.
    const context = await browser.newContext();
    try {
      const first = await context.newPage();
      await first.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => first.locator("#conn").textContent()).toBe("live");
      const second = await context.newPage();
      await second.goto(`${t.url}/#session=${id}`);
      await expect.poll(() => second.locator("#conn").textContent()).toBe("live");
      await first.locator("#sign-out").click();
      await expect.poll(() => second.locator("#login").isVisible()).toBe(true);
      expect(await second.locator("#main").isVisible()).toBe(false);
      expect(await second.locator("#transcript").textContent()).toBe("");
      expect(await second.locator("#conn").textContent()).toBe("idle");
      expect(new URL(second.url()).hash).toBe("");
      expect(await keptToken(second)).toBeNull();
    } finally {
      await context.close();
    }
  });

  it("does not leave a typed token in the sign-in form once signed in", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(t.url);
      await page.locator("#login-token").fill(t.tokens.admin);
      await page.locator("#login-form button[type=submit]").click();
      await page.locator("#main").waitFor();
      expect(await page.locator("#login-token").inputValue()).toBe("");
      await page.locator("#sign-out").click();
      await page.locator("#login").waitFor();
      expect(await page.locator("#login-token").inputValue()).toBe("");
    } finally {
      await page.close();
    }
  });
});

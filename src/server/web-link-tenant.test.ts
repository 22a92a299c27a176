// A sign-in link (#token=...) is easy to send: one with an attacker's token of their own tenant, opened by a
// victim, would move the victim's browser to that tenant, and what the victim types there (prompts with secrets)
// would land in it. In a real browser: a link whose token is not the one this browser keeps asks first, naming
// both tenants, and declining keeps the sign-in as it was; the tenant signed in is named in the page's header,
// plainly, whatever the page shows; and no answer of the daemon's may be framed (the old X-Frame-Options too).
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { keptToken, useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

/** The header's tenant: its name, whether it is bold, and whether all of it is inside the window. */
const tenantShown = (page: Page) =>
  page.locator("#tenant").evaluate((el) => {
    const { innerWidth, innerHeight, getComputedStyle } = globalThis as unknown as {
      innerWidth: number;
      innerHeight: number;
      getComputedStyle(el: unknown): { fontWeight: string };
    };
    const box = el.getBoundingClientRect();
    const inside = box.width > 0 && box.left >= 0 && box.top >= 0;
    return {
      name: el.textContent,
      bold: Number(getComputedStyle(el).fontWeight) >= 600,
      inside: inside && box.right <= innerWidth && box.bottom <= innerHeight,
    };
  });

describe("web UI signing in by link", () => {
  it("names both tenants before a link's token replaces the kept one, and keeps the sign-in when declined", async () => {
    const page = await browser.newPage();
    const asked: string[] = [];
    page.on("dialog", (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("idle");
      await expect.poll(() => tenantShown(page)).toMatchObject({ name: "default" });
      // Opened afresh (a link followed from a mail) and pasted into the tab (hashchange) alike.
      await page.goto(`${t.url}/#token=${t.tokens.other}`);
      await expect.poll(() => asked.length).toBe(1);
      await page.evaluate((token) => {
        (globalThis as unknown as { location: { hash: string } }).location.hash = `token=${token}`;
      }, t.tokens.other);
      await expect.poll(() => asked.length).toBe(2);
      for (const question of asked) {
        expect(question).toContain("This link signs in as tenant acme (controller)");
        expect(question).toContain("This browser is signed in as tenant default (controller)");
      }
      await expect.poll(() => tenantShown(page)).toMatchObject({ name: "default" });
      expect(await keptToken(page)).toBe(t.tokens.admin);
      expect(page.url()).not.toContain("token=");
    } finally {
      await page.close();
    }
  });

  it("says so when the kept token is no longer accepted", async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const asked: string[] = [];
      page.on("dialog", (dialog) => {
        asked.push(dialog.message());
        void dialog.accept();
      });
      await page.goto(t.url);
      await page.evaluate(() => {
        const { localStorage } = globalThis as unknown as {
          localStorage: { setItem(k: string, v: string): void };
        };
        localStorage.setItem("brain.token", "brain_revoked_long_ago");
      });
      await page.goto(`${t.url}/#token=${t.tokens.other}`);
      await expect.poll(() => asked.length).toBe(1);
      expect(asked[0]).toContain("This browser is signed in as a token the daemon no longer accepts");
      await expect.poll(() => tenantShown(page)).toMatchObject({ name: "acme" });
      expect(await keptToken(page)).toBe(t.tokens.other);
    } finally {
      await context.close();
    }
  });

  it("with no token kept, signs in at once and names the tenant in the header, bold, on a narrow window too", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const context = await browser.newContext({ viewport: { width: 360, height: 640 } });
    try {
      const page = await context.newPage();
      const asked: string[] = [];
      page.on("dialog", (dialog) => {
        asked.push(dialog.message());
        void dialog.dismiss();
      });
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      expect(asked).toEqual([]);
      expect(await tenantShown(page)).toEqual({ name: "default", bold: true, inside: true });
      expect(await page.title()).toContain("default");
      // Scrolled to the page's end (a long session on a small screen): the header still says which tenant.
      await page.evaluate(() => {
        const { scrollTo, document } = globalThis as unknown as {
          scrollTo(x: number, y: number): void;
          document: { body: { scrollHeight: number } };
        };
        scrollTo(0, document.body.scrollHeight);
      });
      expect(await tenantShown(page)).toEqual({ name: "default", bold: true, inside: true });
      await page.locator("#sign-out").click();
      await page.locator("#login").waitFor();
      expect(await page.locator("#tenant").count()).toBe(0);
      expect(await page.title()).toBe("Brain");
    } finally {
      await context.close();
    }
  });

  it("is never framed: every answer the page is given says X-Frame-Options: DENY beside frame-ancestors", async () => {
    const page = await browser.newPage();
    const answers: string[] = [];
    page.on("response", (res) => {
      if (res.url().startsWith(t.url)) answers.push(`${res.headers()["x-frame-options"]} ${res.url()}`);
    });
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}`);
      await expect.poll(() => page.locator("#who").textContent()).toContain("tenant default");
      await page.evaluate(() => fetch("/v1/no-such-thing").then((res) => res.status));
      expect(answers.some((a) => a.endsWith("/v1/whoami"))).toBe(true);
      expect(answers.some((a) => a.endsWith("/ui/app.js"))).toBe(true);
      expect(answers.some((a) => a.endsWith("/v1/no-such-thing"))).toBe(true);
      for (const answer of answers) expect(answer).toMatch(/^DENY /);
    } finally {
      await page.close();
    }
  });
});

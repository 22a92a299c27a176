// The web UI when the daemon stops accepting its token (rotated across a restart, in a real browser): the page
// goes back to sign-in with a message that says so, forgets the token it kept, and signs in again with the new
// one. Another tab's newer token, kept meanwhile, is not forgotten with it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { keptToken, useTestBrowser } from "../testing/use-browser.js";
import { newToken } from "./auth/tokens.js";

const home = mkdtempSync(join(tmpdir(), "brain-web-signout-"));
let t: TestDaemon | undefined;
const browser = useTestBrowser();

beforeAll(async () => {
  t = await startTestDaemon({ home });
});

afterAll(async () => {
  await t?.cleanup();
  rmSync(home, { recursive: true, force: true });
});

/** The page's own localStorage, to write in (the test's tsconfig has no DOM types): evaluated in the page. */
type PageStorage = { setItem(key: string, value: string): void };
const keep = (page: Page, token: string) =>
  page.evaluate(
    (token) =>
      (globalThis as unknown as { localStorage: PageStorage }).localStorage.setItem("brain.token", token),
    token,
  );

/** A bound, not a timing: a daemon stopped and started again takes long on a loaded machine. */
const RESTART_BOUND_MS = 120_000;

describe("web UI when its token is no longer accepted", () => {
  it(
    "returns to sign-in with a clear message, forgets the token and signs in again with the new one",
    async () => {
      const before = t!;
      const { id } = await before.client().create({ harness: "echo" });
      const page = await browser.newPage();
      try {
        await page.goto(`${before.url}/#token=${before.tokens.admin}&session=${id}`);
        await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
        await expect.poll(() => page.locator(`#sessions li[data-session="${id}"]`).count()).toBe(1);
        await before.cleanup();
        t = undefined;
        // The same home and port, the admin's token rotated: the page's token is refused from now on.
        const tokens = { ...before.tokens, admin: newToken() };
        t = await startTestDaemon({ home, port: Number(new URL(before.url).port), tokens });
        await expect.poll(() => page.locator("#login").isVisible(), { timeout: 60_000 }).toBe(true);
        expect(await page.locator("#main").isVisible()).toBe(false);
        expect(await page.locator("#login-error").textContent()).toContain("no longer accepts this token");
        expect(await keptToken(page)).toBeNull();
        // What the last tenant's page showed is gone from it: the next one to sign in here does not read it.
        expect(await page.locator("#sessions li").count()).toBe(0);
        expect(await page.locator("#transcript").textContent()).toBe("");
        await page.fill("#login-token", tokens.admin);
        await page.click("#login-form button");
        await expect.poll(() => page.locator("#main").isVisible()).toBe(true);
        await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
        expect(await page.locator("#login-error").textContent()).toBe("");
        expect(await keptToken(page)).toBe(tokens.admin);
      } finally {
        await page.close();
      }
    },
    RESTART_BOUND_MS,
  );

  it(
    "keeps the token another tab signed in with meanwhile",
    async () => {
      const { id } = await t!.client().create({ harness: "echo" });
      const page = await browser.newPage();
      try {
        await page.goto(`${t!.url}/#token=${t!.tokens.admin}&session=${id}`);
        await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
        // The token this tab signed in with was revoked, and another tab kept a newer one in the same browser.
        await keep(page, t!.tokens.observer);
        const before = t!;
        await before.cleanup();
        t = undefined;
        const tokens = { ...before.tokens, admin: newToken() };
        t = await startTestDaemon({ home, port: Number(new URL(before.url).port), tokens });
        await expect.poll(() => page.locator("#login").isVisible(), { timeout: 60_000 }).toBe(true);
        expect(await keptToken(page)).toBe(tokens.observer);
      } finally {
        await page.close();
      }
    },
    RESTART_BOUND_MS,
  );

  it("forgets a kept token the daemon refuses when the page loads", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${t!.url}/`);
      await keep(page, "a-token-revoked-long-ago");
      await page.reload();
      await expect.poll(() => page.locator("#login").isVisible()).toBe(true);
      await expect
        .poll(() => page.locator("#login-error").textContent())
        .toContain("no longer accepts this token");
      expect(await keptToken(page)).toBeNull();
    } finally {
      await page.close();
    }
  });
});

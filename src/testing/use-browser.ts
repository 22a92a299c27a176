// A real Chromium for one browser test file: found and launched in beforeAll (unpacking the npm build may take
// a while the first time), closed in afterAll. Used as the Browser it stands for, as useTestDaemon's daemon.
// `extraArgs` go to chromium's command line after launchTestBrowser's own.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { findTestBrowser, launchTestBrowser } from "./browser.js";

export function useTestBrowser(extraArgs: string[] = []): Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchTestBrowser(await findTestBrowser(), extraArgs);
  }, 180_000);
  afterAll(() => browser?.close());
  return new Proxy({} as Browser, {
    get(_, key) {
      if (!browser) throw new Error("useTestBrowser: the browser starts in beforeAll; use it inside a test");
      const value = Reflect.get(browser, key);
      return typeof value === "function" ? value.bind(browser) : value;
    },
  });
}

/** Opens session `id` in `page` by its link on the daemon at `url` (signed in already), once its head shows it. */
export function sessionOpener(page: Page, url: string): (id: string) => Promise<void> {
  return async (id) => {
    await page.goto(`${url}/#session=${id}`);
    await expect.poll(() => page.locator("#s-title").textContent()).toBe(id);
  };
}

/** The page's own localStorage (a test's tsconfig has no DOM types): evaluated in the page. */
type PageStorage = { getItem(key: string): string | null };

/** The token `page`'s origin keeps in its localStorage (null when none): what a reload would sign in with. */
export const keptToken = (page: Page): Promise<string | null> =>
  page.evaluate(() =>
    (globalThis as unknown as { localStorage: PageStorage }).localStorage.getItem("brain.token"),
  );

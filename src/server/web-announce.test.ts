// The web UI for a screen reader, in a real browser: the transcript is not a live region (every streamed piece
// would be read out), one separate status region says what a user must hear (a turn started or ended, a request
// waiting), and the session's error line and the new-session form's are alerts.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

/** Records every text the page's status region is given, from now on (read with `heard`). */
async function listen(page: Page) {
  // (Strings: the test runs under Node's types, not the DOM's.)
  await page.evaluate(`(() => {
    const region = document.querySelector('[role="status"]');
    window.heard = [];
    new MutationObserver(() => region.textContent && window.heard.push(region.textContent)).observe(region, {
      childList: true,
      characterData: true,
      subtree: true,
    });
  })()`);
}
const heard = (page: Page) => page.evaluate("window.heard") as Promise<string[]>;

describe("web UI's live regions", () => {
  it("announces a turn's start, its request and its end in one status region, not the transcript", async () => {
    const { id } = await t.client().create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { default: "ask" },
    });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await page.locator("#session").waitFor();
      const transcript = page.locator("#transcript");
      expect(await transcript.getAttribute("aria-live")).toBeNull();
      expect(await transcript.getAttribute("role")).toBeNull();
      expect(await page.locator("#s-error").getAttribute("role")).toBe("alert");
      const regions = page.getByRole("status");
      expect(await regions.count()).toBe(1);
      await listen(page);
      await page.fill("#prompt", "echo: say it");
      await page.click("#send");
      await expect
        .poll(() => heard(page))
        .toEqual(["Turn started.", "Permission requested: allow tool echo?"]);
      await page.locator(".request").getByRole("button", { name: "Allow" }).click();
      await expect
        .poll(() => heard(page))
        .toEqual(["Turn started.", "Permission requested: allow tool echo?", "Turn completed."]);

      // Opened afresh with a request waiting: the session's past is not read out again, the waiting request is.
      await page.fill("#prompt", "echo: again");
      await page.click("#send");
      await expect.poll(() => page.locator(".request:not(.answered)").count()).toBe(1);
      await page.reload();
      await page.locator(".request:not(.answered)").waitFor();
      await expect.poll(() => regions.textContent()).toBe("1 request waiting for an answer.");
      await listen(page);
      await page.locator(".request:not(.answered)").getByRole("button", { name: "Allow" }).click();
      await expect.poll(() => heard(page)).toEqual(["Turn completed."]);
    } finally {
      await page.close();
    }
  });
});

describe("web UI's new-session form", () => {
  it("says why a session could not be created in an alert", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}`);
      await page.locator("#main").waitFor();
      await page.fill("#new-tools", "no-such-tool");
      await page.click("#create");
      const alert = page.getByRole("alert").filter({ hasText: /\S/ });
      await expect.poll(() => alert.count()).toBe(1);
      expect(await alert.getAttribute("id")).toBe("new-error");
    } finally {
      await page.close();
    }
  });
});

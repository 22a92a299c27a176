// The web UI's requests that the daemon may have run when their answer was lost (a prompt, a create, a handoff,
// a close, a take of control, an interrupt): each user action carries an Idempotency-Key of its own, and the page sends it once more under that
// key when the connection broke, so the action runs once. In a real browser; the first answer is cut off after the daemon
// took the request (Playwright sends it on, then resets the page's connection).
import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { commandKey } from "../core/command-keys.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

/** Lets the first POST to a path ending in `suffix` reach the daemon, and resets its connection before the page reads the answer. */
async function cutFirstAnswer(page: Page, suffix: string): Promise<string[]> {
  const keys: string[] = [];
  await page.route(
    (url) => url.pathname.endsWith(suffix),
    async (route: Route) => {
      if (route.request().method() !== "POST") return route.continue();
      keys.push(route.request().headers()["idempotency-key"] ?? "");
      if (keys.length > 1) return route.continue();
      await route.fetch(); // the daemon has the request and answers it; the page never sees that answer
      return route.abort("connectionreset");
    },
  );
  return keys;
}

describe("web UI's keyed requests", () => {
  it("sends a prompt whose answer was lost once more under its key: one turn, one logged prompt", async () => {
    const id = (await t.client().create({ harness: "echo" })).id;
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const keys = await cutFirstAnswer(page, "/prompt");
      await page.fill("#prompt", "only once");
      await page.click("#send");
      await expect.poll(() => page.locator("#transcript").textContent()).toContain("echo #1: only once");
      // The box is cleared once the retry's answer came: the page took the prompt as sent.
      await expect.poll(() => page.locator("#prompt").inputValue()).toBe("");
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]);
      const prompts = (await t.client().log(id)).events.filter((e) => e.type === "user.prompt");
      expect(prompts.map((e) => [e.data.text, commandKey(e)])).toEqual([["only once", keys[0]]]);
    } finally {
      await page.close();
    }
  });

  it("sends a create whose answer was lost once more under its key: one session, opened", async () => {
    const before = (await t.client().sessions()).map((s) => s.id);
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}`);
      await expect.poll(() => page.locator("#new-harness option").count()).toBeGreaterThan(0);
      const keys = await cutFirstAnswer(page, "/v1/sessions");
      await page.selectOption("#new-harness", "echo");
      await page.click("#create");
      const made = async () =>
        (await t.client().sessions()).map((s) => s.id).filter((s) => !before.includes(s));
      await expect.poll(made).toHaveLength(1);
      const [id] = await made();
      // The retry's answer is the session the first made, and the page opens it.
      await expect.poll(() => page.locator("#s-title").textContent()).toBe(id);
      expect(await made()).toEqual([id]);
      expect(keys).toEqual([keys[0], keys[0]]);
    } finally {
      await page.close();
    }
  });

  it("sends a handoff whose answer was lost once more under its key: one new session, opened", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const before = (await t.client().sessions()).map((s) => s.id);
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await expect.poll(() => page.locator("#handoff-to option").count()).toBeGreaterThan(0);
      const keys = await cutFirstAnswer(page, "/handoff");
      await page.selectOption("#handoff-to", "echo");
      await page.click("#handoff");
      const made = async () =>
        (await t.client().sessions()).map((s) => s.id).filter((s) => !before.includes(s));
      await expect.poll(() => page.locator("#s-title").textContent()).not.toBe(id);
      const [handedTo] = await made();
      await expect.poll(() => page.locator("#s-title").textContent()).toBe(handedTo);
      expect(await made()).toEqual([handedTo]);
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]);
      expect(keys[0]).not.toBe("");
    } finally {
      await page.close();
    }
  });

  it("sends a close whose answer was lost once more under its key, and shows the session closed", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const keys = await cutFirstAnswer(page, "/close");
      await page.click("#close");
      await expect.poll(() => keys.length).toBe(2);
      await expect.poll(() => page.locator("#s-status").textContent()).toBe("closed");
      expect(await page.locator("#s-error").textContent()).toBe("");
      expect(keys[1]).toBe(keys[0]);
      expect(keys[0]).not.toBe("");
    } finally {
      await page.close();
    }
  });

  it("sends a take of control whose answer was lost once more under its key, and shows the page in control", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    await t.client({ client: "the-cli" }).takeControl(id, "the-cli");
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#s-control").textContent()).toBe("controlled by the-cli");
      const keys = await cutFirstAnswer(page, "/control");
      await page.click("#take-control");
      await expect.poll(() => keys.length).toBe(2);
      await expect.poll(() => page.locator("#s-control").textContent()).toBe("you control it");
      expect(await page.locator("#s-error").textContent()).toBe("");
      expect(keys[1]).toBe(keys[0]);
      expect(keys[0]).not.toBe("");
    } finally {
      await page.close();
    }
  });

  it("sends an interrupt whose answer was lost once more under its key: one interrupt logged", async () => {
    // A stream slow enough to be interrupted: a word a minute, and the turn ends when it is interrupted.
    const config = { options: { delay_ms: 60_000 } };
    const { id } = await t.client().create({ harness: "echo", config });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await page.fill("#prompt", "one two three");
      await page.click("#send");
      await expect.poll(() => page.locator("#interrupt").isEnabled()).toBe(true);
      const keys = await cutFirstAnswer(page, "/interrupt");
      await page.click("#interrupt");
      await expect.poll(() => keys.length).toBe(2);
      expect(keys[1]).toBe(keys[0]);
      expect(keys[0]).not.toBe("");
      const logged = async () => (await t.client().log(id)).events.filter((e) => e.type === "user.interrupt");
      await expect.poll(async () => (await logged()).map(commandKey)).toEqual([keys[0]]);
      expect(await page.locator("#s-error").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });
});

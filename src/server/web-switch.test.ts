// The web UI while an action is on its way, in a real browser: what comes back for a session left (an action's
// answer on its way when the next one was opened) does not show in the head of the one now open, and a prompt's
// answer clears the composer only of the text it sent, not of what was typed meanwhile.
// An action's failure, and a failure to read a session's log, is shown only while its session is open; a link of
// another tenant's that signs the tab in closes the session the first tenant had open; a fork that comes back after
// another session was opened is listed, not opened over it.
import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

/** Clicks `button` with its request to `path` held on its way, then opens session `next`: the request held. */
async function clickHeldThenOpen(page: Page, button: string, path: string, next: string): Promise<Route> {
  let held: Route | undefined;
  await page.route(
    (url) => url.pathname === path,
    (route) => {
      held = route;
    },
  );
  await page.click(button);
  await expect.poll(() => held !== undefined).toBe(true);
  await page.goto(`${t.url}/#session=${next}`);
  await expect.poll(() => page.locator("#s-title").textContent()).toBe(next);
  return held!;
}

describe("web UI opening another session while an action on the first is on its way", () => {
  it("keeps the first one's answer out of the second one's head", async () => {
    const client = t.client();
    const first = (await client.create({ harness: "echo" })).id;
    const second = (await client.create({ harness: "echo" })).id;
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${first}`);
      await expect.poll(() => page.locator("#s-status").textContent()).toBe("idle");
      const held = await clickHeldThenOpen(page, "#close", `/v1/sessions/${first}/close`, second);
      await expect.poll(() => page.locator("#s-status").textContent()).toBe("idle");
      const closed = page.waitForResponse((res) => res.url().endsWith(`/v1/sessions/${first}/close`));
      await held.continue();
      expect((await closed).status()).toBe(200);
      // A call of the page's own, answered, comes after it has read the first session's answer.
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      expect(await page.locator("#s-status").textContent()).toBe("idle");
      expect(await page.locator("#s-title").textContent()).toBe(second);
    } finally {
      await page.close();
    }
  });
});

describe("web UI opening another session while an action on the first fails", () => {
  it("does not show the first one's failure on the second one's page", async () => {
    const client = t.client();
    const first = (await client.create({ harness: "echo" })).id;
    const second = (await client.create({ harness: "echo" })).id;
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${first}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const held = await clickHeldThenOpen(page, "#checkpoint", `/v1/sessions/${first}/checkpoints`, second);
      const failed = page.waitForEvent("requestfailed", (r) => r.url().endsWith(`/${first}/checkpoints`));
      await held.abort("connectionfailed");
      await failed;
      // A call of the page's own, answered, comes after it has read the first session's failure.
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      expect(await page.locator("#s-error").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });
});

describe("web UI's composer while a prompt is on its way", () => {
  it("keeps what was typed meanwhile, clearing only the text that was sent", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      let held: Route | undefined;
      await page.route(
        (url) => url.pathname === `/v1/sessions/${id}/prompt`,
        (route) => {
          held = route;
        },
      );
      await page.fill("#prompt", "the first question");
      await page.click("#send");
      await expect.poll(() => held !== undefined).toBe(true);
      await page.fill("#prompt", "a second thought, typed while the first was on its way");
      const sent = page.waitForResponse((res) => res.url().endsWith(`/v1/sessions/${id}/prompt`));
      await held!.continue();
      expect((await sent).status()).toBeLessThan(300);
      // A call of the page's own, answered, comes after it has read the prompt's answer.
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      await expect
        .poll(() => page.locator("#transcript").textContent())
        .toContain("echo #1: the first question");
      expect(await page.locator("#prompt").inputValue()).toBe(
        "a second thought, typed while the first was on its way",
      );
    } finally {
      await page.close();
    }
  });
});

describe("web UI's composer when another session is opened while the prompt's images are read", () => {
  it("sends the prompt to the session it was typed in", async () => {
    const client = t.client();
    const first = (await client.create({ harness: "echo" })).id;
    const second = (await client.create({ harness: "echo" })).id;
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${first}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      // The picked image's read from disk is held until the second session is open.
      await page.evaluate(() => {
        type Reader = { prototype: { readAsDataURL(this: unknown, blob: unknown): void } };
        const w = globalThis as unknown as { held?: () => void; FileReader: Reader };
        const read = w.FileReader.prototype.readAsDataURL;
        w.FileReader.prototype.readAsDataURL = function (blob) {
          new Promise<void>((resolve) => {
            w.held = resolve;
          }).then(() => read.call(this, blob));
        };
      });
      const png = Buffer.from("89504e470d0a1a0a", "hex");
      await page.setInputFiles("#images", { name: "a.png", mimeType: "image/png", buffer: png });
      await page.fill("#prompt", "for the first session");
      await page.click("#send");
      await expect.poll(() => page.evaluate(() => "held" in globalThis)).toBe(true);
      await page.goto(`${t.url}/#session=${second}`);
      await expect.poll(() => page.locator("#s-title").textContent()).toBe(second);
      const sent = page.waitForRequest((req) => req.url().endsWith("/prompt"));
      await page.evaluate(() => (globalThis as unknown as { held: () => void }).held());
      expect(new URL((await sent).url()).pathname).toBe(`/v1/sessions/${first}/prompt`);
    } finally {
      await page.close();
    }
  });
});

describe("web UI opening another session while the first one's log is read", () => {
  it("does not show the first one's failure to read it on the second one's page", async () => {
    const client = t.client();
    const first = (await client.create({ harness: "echo" })).id;
    const second = (await client.create({ harness: "echo" })).id;
    const page = await browser.newPage();
    try {
      // The first session's view says it is long: the page reads its tail from the log, and that read is held.
      await page.route(
        (url) => url.pathname === `/v1/sessions/${first}`,
        async (route) => {
          const response = await route.fetch();
          await route.fulfill({ response, json: { ...(await response.json()), last_seq: 5000 } });
        },
      );
      let held: Route | undefined;
      await page.route(
        (url) => url.pathname === `/v1/sessions/${first}/log`,
        (route) => {
          held = route;
        },
      );
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${first}`);
      await expect.poll(() => held !== undefined).toBe(true);
      await page.goto(`${t.url}/#session=${second}`);
      await expect.poll(() => page.locator("#s-title").textContent()).toBe(second);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const failed = page.waitForEvent("requestfailed", (r) => r.url().includes(`/${first}/log?`));
      await held!.abort("connectionfailed");
      await failed;
      // A call of the page's own, answered, comes after it has read the first session's failure.
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      expect(await page.locator("#s-error").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });
});

describe("web UI signed in by another tenant's link while a session is open", () => {
  it("no longer shows nor follows the first tenant's session", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const page = await browser.newPage();
    page.on("dialog", (dialog) => void dialog.accept());
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await expect.poll(() => page.locator("#transcript").textContent()).toContain("session opened");
      // The other tenant's link, pasted into the tab, and the page's question whether to switch answered yes.
      await page.goto(`${t.url}/#token=${t.tokens.other}`);
      await expect.poll(() => page.locator("#who").textContent()).toContain("tenant acme");
      expect(await page.locator("#session").isVisible()).toBe(false);
      expect(await page.locator("#transcript").textContent()).toBe("");
      expect(await page.locator("#conn").textContent()).toBe("idle");
    } finally {
      await page.close();
    }
  });
});

describe("web UI opening another session while a fork of the first is on its way", () => {
  it("stays on the session opened meanwhile, and lists the fork", async () => {
    const client = t.client();
    const first = (await client.create({ harness: "echo" })).id;
    await client.checkpoint(first); // what a fork starts from
    const second = (await client.create({ harness: "echo" })).id;
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${first}`);
      await expect.poll(() => page.locator("#s-status").textContent()).toBe("idle");
      const held = await clickHeldThenOpen(page, "#fork", `/v1/sessions/${first}/fork`, second);
      const forked = page.waitForResponse((res) => res.url().endsWith(`/v1/sessions/${first}/fork`));
      await held.continue();
      const fork = ((await (await forked).json()) as { id: string }).id;
      await expect.poll(() => page.locator(`#sessions li[data-session="${fork}"]`).count()).toBe(1);
      // A call of the page's own, answered, comes after the list it refreshed for the fork.
      await page.evaluate(() => fetch("/healthz").then((res) => res.text()));
      expect(await page.locator("#s-title").textContent()).toBe(second);
    } finally {
      await page.close();
    }
  });
});

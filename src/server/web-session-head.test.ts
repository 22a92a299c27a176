// The web UI's session head and composer as the user acts on them, in a real browser: after "Take control" the
// head says the page controls the session, without a reload; an action another client's control refuses says to
// press it; the head says what the session's native state takes on disk; images picked for one session stay with
// it when another is opened, as its draft does, and are never sent with another session's prompt.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sessionOpener, useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI's head after Take control", () => {
  it("says the page controls the session once it took control, also one older than the list shows", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    await t.client({ client: "the-cli" }).takeControl(id, "the-cli");
    // The list shows the newest 100: the head's session, opened by its link, is not among them.
    for (let i = 0; i < 100; i++) await t.client().create({ harness: "echo" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#s-control").textContent()).toBe("controlled by the-cli");
      await page.click("#take-control");
      await expect.poll(() => page.locator("#s-control").textContent()).toBe("you control it");
      expect(await page.locator("#take-control").isHidden()).toBe(true);
    } finally {
      await page.close();
    }
  });
});

describe("web UI's composer on a session another client controls", () => {
  it("says to press Take control, not which API call takes it, and sends once it is pressed", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    await t.client({ client: "the-cli" }).takeControl(id, "the-cli");
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await page.fill("#prompt", "from the page");
      await page.click("#send");
      await expect.poll(() => page.locator("#s-error").textContent()).toContain("Take control");
      const said = await page.locator("#s-error").textContent();
      expect(said).toContain('client "the-cli" controls this session');
      expect(said).not.toContain("POST");
      expect(await page.locator("#prompt").inputValue()).toBe("from the page");
      await page.click("#take-control");
      await expect.poll(() => page.locator("#s-control").textContent()).toBe("you control it");
      await page.click("#send");
      await page.locator(".msg.user", { hasText: "from the page" }).waitFor();
      expect(await page.locator("#s-error").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });
});

describe("web UI's head: native state on disk", () => {
  it("says what the session's native state takes, from its view, and keeps it over an action's answer", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const native = join(t.home, "sessions", id, "native");
    rmSync(native, { recursive: true, force: true });
    mkdirSync(native);
    writeFileSync(join(native, "state.bin"), Buffer.alloc(3072));
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#s-disk").textContent()).toBe("native state 3.0 KiB");
      // Close answers the session's view without the count (no command's answer walks a native dir).
      await page.click("#close");
      await expect.poll(() => page.locator("#s-status").textContent()).toBe("closed");
      expect(await page.locator("#s-disk").textContent()).toBe("native state 3.0 KiB");
    } finally {
      await page.close();
    }
  });
});

describe("web UI's picked images when another session is opened", () => {
  it("keeps them with the session they were picked for", async () => {
    const client = t.client();
    const first = (await client.create({ harness: "echo" })).id;
    const second = (await client.create({ harness: "echo" })).id;
    const page = await browser.newPage();
    const open = sessionOpener(page, t.url);
    const picked = () =>
      page.locator("#images").evaluate((input) => (input as { files: { length: number } }).files.length);
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${first}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const png = Buffer.from("89504e470d0a1a0a", "hex");
      await page.setInputFiles("#images", { name: "a.png", mimeType: "image/png", buffer: png });
      await open(second);
      expect(await picked()).toBe(0);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await page.fill("#prompt", "no picture here");
      const sent = page.waitForRequest((req) => req.url().endsWith("/prompt"));
      await page.click("#send");
      const body = (await sent).postDataJSON() as { text: string; images?: unknown[] };
      expect(body).toEqual({ text: "no picture here" });
      await open(first);
      expect(await picked()).toBe(1);
    } finally {
      await page.close();
    }
  });
});

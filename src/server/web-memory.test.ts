// The web UI left open on a busy session, in a real browser: the transcript keeps its newest entries, not every
// event the tab was sent, says which went, keeps a question still waiting for its answer, and shows everything
// again on Show all.
import { describe, expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { collect, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

/** The entries a transcript keeps (web/session.js), and the tenth over it it may reach before trimming. */
const SHOWN = 2000;

// A turn that asks a question, then warns 2,500 times (each an entry of its own), then says what it was told.
const steps = scripted(async (options, turn) => {
  const answer = options.ask(turn, { question: "Go on?", options: ["yes"] }, new AbortController().signal);
  for (let i = 0; i < 2500; i++)
    options.emit({ type: "harness.warning", turn, data: { message: `number ${i}.` } });
  options.emit({ type: "assistant.delta", turn, data: { text: `answered ${await answer}` } });
});
const t = useTestDaemon({ factories: [steps] });
const browser = useTestBrowser();

describe("web UI left open on a busy session", () => {
  it("keeps the newest entries, names the ones that went, and keeps the question still to answer", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const { turn } = (await client.prompt(id, "warn a lot")) as { turn: string };
      const transcript = () => page.locator("#transcript").textContent();
      await expect.poll(transcript).toContain("warning: number 2499.");
      const entries = () => page.locator("#transcript > *").count();
      expect(await entries()).toBeLessThanOrEqual(SHOWN * 1.1 + 1);
      expect(await transcript()).not.toContain("warning: number 0.");
      const first = page.locator("#transcript > *").first();
      expect(await first.getAttribute("data-skipped")).not.toBeNull();
      expect(await first.textContent()).toMatch(/^events 1–\d+ are not shown/);
      // The question came before every warning, and is still there to answer.
      await page.locator(".request button", { hasText: "yes" }).click();
      await collect(client, id, settled(turn));
      await expect.poll(transcript).toContain("answered yes");
      await page.click("button.show-all");
      await expect.poll(entries).toBeGreaterThan(2500);
      expect(await transcript()).toContain("warning: number 0.");
    } finally {
      await page.close();
    }
  });
});

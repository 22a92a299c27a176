// The web UI left open on a busy session while its reader has scrolled up, in a real browser: trimming the oldest
// entries (the transcript keeps its newest 2,000) does not move what the reader is looking at, with the browser's
// CSS scroll anchoring and without it (overflow-anchor: none stands in for Safari, which has none).
import { describe, expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { collect, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

// A turn that warns 2,000 times (each an entry of its own), asks a question, then warns 500 times more.
const steps = scripted(async (options, turn) => {
  for (let i = 0; i < 2000; i++)
    options.emit({ type: "harness.warning", turn, data: { message: `number ${i}.` } });
  await options.ask(turn, { question: "Go on?", options: ["yes"] }, new AbortController().signal);
  for (let i = 2000; i < 2500; i++)
    options.emit({ type: "harness.warning", turn, data: { message: `number ${i}.` } });
});
const t = useTestDaemon({ factories: [steps] });
const browser = useTestBrowser();

describe("web UI trimming a transcript its reader has scrolled up in", () => {
  it.each(["auto", "none"])(
    "keeps the entry being read where it was (overflow-anchor: %s)",
    async (anchoring) => {
      const client = t.client();
      const { id } = await client.create({ harness: "scripted" });
      const page = await browser.newPage();
      try {
        await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
        await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
        await page.locator("#transcript").evaluate((node, value) => {
          node.style.overflowAnchor = value;
        }, anchoring);
        const { turn } = (await client.prompt(id, "warn a lot")) as { turn: string };
        await page.locator(".request button", { hasText: "yes" }).waitFor();
        const read = page.locator(".note.warning", { hasText: "warning: number 1500." });
        // Where the entry being read is in the transcript's window.
        const shownAt = () =>
          read.evaluate((node) => {
            const box = node.closest(".transcript")!;
            return node.getBoundingClientRect().top - box.getBoundingClientRect().top;
          });
        await read.evaluate((node) => node.scrollIntoView());
        const before = await shownAt();
        // Answered in the page without scrolling to the button, as a reader who stays where they read.
        await page.locator(".request button", { hasText: "yes" }).evaluate((button) => button.click());
        await collect(client, id, settled(turn));
        await expect.poll(() => page.locator("#transcript").textContent()).toContain("warning: number 2499.");
        // Trimmed: the oldest went.
        expect(await page.locator("#transcript").textContent()).not.toContain("warning: number 0.");
        // Within a pixel: the browser keeps its scroll position in whole pixels.
        expect(Math.abs((await shownAt()) - before)).toBeLessThan(2);
      } finally {
        await page.close();
      }
    },
  );
});

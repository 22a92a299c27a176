// The web UI in a real browser given a message with no place to break it (a long URL, a key, base64 pasted into
// the prompt): it wraps inside its bubble, and the transcript gets no sideways scrollbar. It ran out of the bubble
// across tens of thousands of pixels, and the transcript scrolled sideways to the reply's end.
import { describe, expect, it } from "vitest";
import { collect, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI showing a message with no place to break it", () => {
  it("wraps it inside its bubble, with nothing wider than the transcript", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const word = `https://example.com/${"a1b2c3".repeat(500)}`;
      const { turn } = (await client.prompt(id, word)) as { turn: string };
      await collect(client, id, settled(turn));
      await page.locator(".msg.assistant:not(.streaming)").waitFor();
      // Each entry and the transcript: how far their content reaches past the width they have.
      const overflow = await page.locator("#transcript").evaluate((transcript) =>
        [transcript, ...transcript.children].map((node) => ({
          entry: node.className,
          beyond: node.scrollWidth - node.clientWidth,
        })),
      );
      expect(overflow.length).toBeGreaterThanOrEqual(3);
      expect(overflow.filter(({ beyond }) => beyond > 0)).toEqual([]);
      expect(await page.locator(".msg.user").textContent()).toBe(word);
    } finally {
      await page.close();
    }
  });
});

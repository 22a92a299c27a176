// The web UI's checkpoint list on a session of thousands of events, in a real browser: the page reads such a log
// near its end, so the checkpoints made before are not among what it read; the list says so instead of passing
// them over, and lists them all once the whole log is read.
import { describe, expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { collect, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

/** How many deltas the scripted harness's next turn streams. */
let deltas = 1;
const steps = scripted(async (options, turn) => {
  for (let i = 0; i < deltas; i++) options.emit({ type: "assistant.delta", turn, data: { text: "." } });
});
const t = useTestDaemon({ factories: [steps] });
const browser = useTestBrowser();

describe("web UI's checkpoint list on a long session", () => {
  it("says the checkpoints before the events read are not listed, and lists them once the whole log is read", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted" });
    const checkpoints: string[] = [];
    for (const length of [1, 3000, 1]) {
      deltas = length;
      const { turn } = (await client.prompt(id, `a turn of ${length}`)) as { turn: string };
      await collect(client, id, settled(turn));
      checkpoints.push((await client.checkpoint(id)).id);
    }
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await page.locator("[data-skipped]").waitFor();
      const listed = () =>
        page
          .locator("#checkpoint-list li[data-checkpoint]")
          .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-checkpoint")));
      await expect.poll(listed).toEqual([checkpoints[2]]);
      const before = page.locator("#checkpoint-list .checkpoints-before");
      expect(await before.textContent()).toMatch(/^Checkpoints made before event \d+ are not listed/);
      expect(await page.locator("#checkpoints-count").textContent()).toBe("Checkpoints (1)");
      await page.click("#checkpoints-count");
      await before.getByRole("button", { name: "Read the whole log" }).click();
      await expect.poll(listed).toEqual(checkpoints);
      expect(await before.count()).toBe(0);
      expect(await page.locator("[data-skipped]").count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});

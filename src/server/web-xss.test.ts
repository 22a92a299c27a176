// The web UI in a real browser against what a prompt-injected agent can make it show: markup in a reply, a tool's
// name, arguments and result, a warning, a question and its options, and a failed turn's error is shown as the
// text it is, never made into elements (an image whose onerror could read the token the page holds).
import { describe, expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { collect, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const MARKUP = `<img src=x onerror="window.__xss=1"><script>window.__xss=1</script><a href="javascript:1">x</a>`;

const steps = scripted(async (options, turn) => {
  const emit = options.emit;
  emit({ type: "assistant.delta", turn, data: { text: `reply ${MARKUP}` } });
  emit({ type: "tool.call", turn, data: { id: "t-1", name: `tool ${MARKUP}`, arguments: { v: MARKUP } } });
  emit({
    type: "tool.result",
    turn,
    data: { id: "t-1", content: [{ type: "text", text: MARKUP }], is_error: false },
  });
  emit({ type: "harness.warning", turn, data: { message: `warning ${MARKUP}` } });
  const signal = new AbortController().signal;
  const answer = options.ask(turn, { question: `question ${MARKUP}`, options: [`option ${MARKUP}`] }, signal);
  await answer;
  throw new Error(`failure ${MARKUP}`);
});
const t = useTestDaemon({ factories: [steps] });
const browser = useTestBrowser();

describe("web UI showing what an agent said", () => {
  it("shows markup from every surface as text, and makes no element of it", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const { turn } = (await client.prompt(id, `prompt ${MARKUP}`)) as { turn: string };
      await page.locator(".request button", { hasText: "option" }).click();
      await collect(client, id, settled(turn));
      await page.locator("[data-settled]").waitFor();
      await page.locator("details.tool summary").click();
      const text = (await page.locator("#transcript").textContent()) ?? "";
      for (const surface of [
        "prompt",
        "reply",
        "tool",
        "warning",
        "question",
        "option",
        "answered: option",
        "failure",
      ])
        expect(text).toContain(`${surface} ${MARKUP}`);
      expect(await page.locator("#transcript img, #transcript script, #transcript a").count()).toBe(0);
      expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    } finally {
      await page.close();
    }
  });
});

// The web UI in a real browser against terminal output: a tool's result and an agent's reply with colour codes,
// a window title, a bell and a carriage return (a CLI tool run in a terminal writes them) is shown as the text a
// terminal would show, not as the escape sequences' printable halves ("[31m") around it.
import { describe, expect, it } from "vitest";
import { scripted } from "../testing/brain.js";
import { collect, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const ESC = "\u001b";
/** What `ls --color` and a build tool print: colours, a bold reset, a window title ended by a bell, a CR LF. */
const COLOURED = `${ESC}]0;build${ESC}\\${ESC}[1;31merror${ESC}[0m: ${ESC}[4mmain.ts${ESC}[24m\r\n${ESC}]2;t\u0007done\u0007`;

const steps = scripted(async (options, turn) => {
  options.emit({ type: "assistant.delta", turn, data: { text: `reply ${COLOURED}` } });
  // A sequence and a CR LF, each cut in two between deltas.
  for (const text of [`, ${ESC}[3`, `2mgreen${ESC}[0m\r`, "\nend"])
    options.emit({ type: "assistant.delta", turn, data: { text } });
  options.emit({
    type: "tool.call",
    turn,
    data: { id: "t-1", name: "bash", arguments: { command: "make" } },
  });
  options.emit({
    type: "tool.result",
    turn,
    data: { id: "t-1", content: [{ type: "text", text: `result ${COLOURED}` }], is_error: false },
  });
  options.emit({ type: "harness.warning", turn, data: { message: `warning ${COLOURED}` } });
});
const t = useTestDaemon({ factories: [steps] });
const browser = useTestBrowser();

describe("web UI showing terminal output", () => {
  it("shows the text without the escape sequences and control characters around it", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "scripted" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      const { turn } = (await client.prompt(id, "build it")) as { turn: string };
      await collect(client, id, settled(turn));
      await expect.poll(() => page.locator(".note.warning").count()).toBe(1);
      await expect.poll(() => page.locator(".msg.assistant .text").textContent()).toContain("reply");
      const shown = {
        reply: await page.locator(".msg.assistant .text").textContent(),
        result: await page.locator("details.tool .tool-result").textContent(),
        warning: await page.locator(".note.warning").textContent(),
      };
      expect(shown).toEqual({
        reply: "reply error: main.ts\ndone, green\nend",
        result: "result error: main.ts\ndone",
        warning: "warning: warning error: main.ts\ndone",
      });
    } finally {
      await page.close();
    }
  });
});

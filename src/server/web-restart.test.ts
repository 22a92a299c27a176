// The web UI across a daemon restart, in a real browser: the page open on a session waits while the daemon is
// down, then goes on from the last event it showed, with nothing lost and nothing shown twice.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";

const home = mkdtempSync(join(tmpdir(), "brain-web-restart-"));
let t: TestDaemon | undefined;
const browser = useTestBrowser();

beforeAll(async () => {
  t = await startTestDaemon({ home });
});

afterAll(async () => {
  await t?.cleanup();
  rmSync(home, { recursive: true, force: true });
});

/**
 * A bound, not a timing: a daemon stopped and started again, and the page's reconnect (one try a second), take far
 * longer on a machine running the whole suite than the default 30 s allows for a test's every step together.
 */
const RESTART_BOUND_MS = 120_000;

describe("web UI across a daemon restart", () => {
  it(
    "resumes the session's stream from its last event, none lost and none twice",
    async () => {
      const before = t!;
      const { id } = await before.client().create({ harness: "echo" });
      const page = await browser.newPage();
      try {
        await page.goto(`${before.url}/#token=${before.tokens.admin}&session=${id}`);
        await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
        const first = (await before.client().prompt(id, "before the restart")) as { turn: string };
        await collect(before.client(), id, settled(first.turn));
        const transcript = () => page.locator("#transcript").textContent();
        await expect.poll(transcript).toContain("echo #1: before the restart");
        await before.cleanup();
        t = undefined;
        await expect.poll(() => page.locator("#conn").textContent()).toBe("reconnecting…");
        // The same home, port and tokens: the page's link and stream still name it.
        t = await startTestDaemon({ home, port: Number(new URL(before.url).port), tokens: before.tokens });
        await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
        const client = t.client();
        const second = (await client.prompt(id, "after the restart")) as { turn: string };
        const events = await collect(client, id, settled(second.turn));
        await expect.poll(transcript).toContain("echo #2: after the restart");
        // Every event once: what the page shows is what the log holds.
        expect(await page.locator(".msg.user").allTextContents()).toEqual([
          "before the restart",
          "after the restart",
        ]);
        const replies = events
          .filter((e) => e.type === "assistant.message")
          .map((e) => (e.data as { text: string }).text);
        await expect.poll(() => page.locator(".msg.assistant .text").allTextContents()).toEqual(replies);
        expect(await page.locator("#s-stream").textContent()).toBe("");
      } finally {
        await page.close();
      }
    },
    RESTART_BOUND_MS,
  );

  it(
    "shows a turn the restart cut off as ended, with the text the log kept and no more",
    async () => {
      const before = t!;
      const { id } = await before.client().create({ harness: "echo", config: { options: { delay_ms: 40 } } });
      const page = await browser.newPage();
      try {
        await page.goto(`${before.url}/#token=${before.tokens.admin}&session=${id}`);
        await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
        await before.client().prompt(id, Array.from({ length: 300 }, (_, i) => `w${i}`).join(" "));
        // The answer's text, not the prompt's (which holds every word at once): cut off with some of it shown.
        const answered = () => page.locator(".msg.assistant .text").allTextContents();
        await expect.poll(async () => (await answered()).join("")).toContain("w5");
        await before.cleanup();
        t = await startTestDaemon({ home, port: Number(new URL(before.url).port), tokens: before.tokens });
        await expect.poll(() => page.locator("#turn-state").textContent()).toBe("");
        const log = (await t.client().log(id)).events;
        const said = log
          .filter((e) => e.type === "assistant.delta")
          .map((e) => (e.data as { text: string }).text)
          .join("");
        await expect.poll(async () => (await answered()).join("")).toBe(said);
        expect(log.filter((e) => e.type === "turn.settled")).toHaveLength(1);
      } finally {
        await page.close();
      }
    },
    RESTART_BOUND_MS,
  );
});

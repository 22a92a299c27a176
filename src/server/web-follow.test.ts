// The web UI's event stream when what comes back is not what the daemon sends, in a real browser: a refusal
// whose body is not the daemon's JSON (a proxy's page) stops the stream and names the status and what to do (as
// one in the daemon's words does: a session deleted while open), and
// an event the page cannot read stops it naming that event, instead of trying again every second for good.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { MAX_TOOL_RESULT_BYTES } from "../protocol/events.js";
import { scripted } from "../testing/brain.js";
import { collect, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

/** A page open on a new session whose event stream is answered with `status`, `type` and `body`. */
async function streamAnswered(
  status: number,
  type: string,
  body: string,
  /** A script the page runs before its own (the test runs under Node's types, not the DOM's). */
  init?: string,
): Promise<{ page: Page; asked: () => number }> {
  const { id } = await t.client().create({ harness: "echo" });
  const page = await browser.newPage();
  if (init) await page.addInitScript({ content: init });
  let asked = 0;
  await page.route(
    (url) => url.pathname.endsWith("/events"),
    (route) => {
      asked++;
      return route.fulfill({ status, headers: { "content-type": type }, body });
    },
  );
  await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
  return { page, asked: () => asked };
}

describe("web UI event stream refused with a body that is not JSON", () => {
  it.each([
    [404, "pick another"],
    [400, "reload the page"],
  ])("stops on %i and says the status and what to do", async (status, advice) => {
    const { page, asked } = await streamAnswered(status, "text/html", "<html><body>Not here</body></html>");
    try {
      await expect.poll(() => page.locator("#conn").textContent()).toBe("stopped");
      const said = await page.locator("#s-stream").textContent();
      expect(said).toContain(`HTTP ${status}`);
      expect(said).toContain(advice);
      expect(asked()).toBe(1);
    } finally {
      await page.close();
    }
  });

  it("goes back to sign-in on 401, once, saying the token is no longer accepted", async () => {
    const { page, asked } = await streamAnswered(401, "text/html", "<html><body>Who?</body></html>");
    try {
      await expect.poll(() => page.locator("#login").isVisible()).toBe(true);
      expect(await page.locator("#login-error").textContent()).toContain("no longer accepts this token");
      expect(await page.locator("#main").isVisible()).toBe(false);
      expect(asked()).toBe(1);
    } finally {
      await page.close();
    }
  });
});

describe("web UI event stream of a session deleted while it is open", () => {
  it("stops, and says what to do beside the daemon's words", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await client.delete(id, { force: true });
      await expect.poll(() => page.locator("#conn").textContent()).toBe("stopped");
      const said = await page.locator("#s-stream").textContent();
      expect(said).toContain(`no session "${id}"`);
      expect(said).toContain("pick another in the list");
    } finally {
      await page.close();
    }
  });

  it("says in its head that it is not found, not the status it had", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 200 } } });
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await client.prompt(id, Array.from({ length: 100 }, (_, i) => `w${i}`).join(" "));
      await expect.poll(() => page.locator("#turn-state").textContent()).toBe("turn running…");
      await expect.poll(() => page.locator("#s-status").textContent()).toBe("running");
      await client.delete(id, { force: true });
      await expect.poll(() => page.locator("#conn").textContent()).toBe("stopped");
      await expect.poll(() => page.locator("#s-status").textContent()).toBe("not found");
      expect(await page.locator("#s-control").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });
});

describe("web UI event stream sending an event it cannot read", () => {
  it("shows the events before it, then stops naming it", async () => {
    const opened = {
      seq: 1,
      ts: new Date().toISOString(),
      session: "s",
      type: "session.opened",
      data: { harness: "echo" },
    };
    const { page, asked } = await streamAnswered(
      200,
      "text/event-stream",
      `id: 1\ndata: ${JSON.stringify(opened)}\n\nid: 2\ndata: {"seq": 2, "type": "user.pro\n\n`,
    );
    try {
      await expect.poll(() => page.locator("#conn").textContent()).toBe("stopped");
      expect(await page.locator("#transcript").textContent()).toContain("session opened on echo");
      expect(await page.locator("#s-stream").textContent()).toMatch(/^event 2 is not JSON .*Reload the page/);
      expect(asked()).toBe(1);
    } finally {
      await page.close();
    }
  });
});

describe("web UI event stream sending one large event in many pieces", () => {
  // As large as an event gets: a tool result is cut to this (tool-result-bound.ts), the note of the cut aside.
  const RESULT = MAX_TOOL_RESULT_BYTES;
  const steps = scripted(async (options, turn) => {
    options.emit({ type: "tool.call", turn, data: { id: "big", name: "Read", arguments: {} } });
    const content = [{ type: "text" as const, text: "x".repeat(RESULT) }];
    options.emit({ type: "tool.result", turn, data: { id: "big", content, is_error: false } });
  });
  const own = useTestDaemon({ factories: [steps] });

  it("searches each piece for the message's end once, not all of the message so far for each piece", async () => {
    const client = own.client();
    const { id } = await client.create({ harness: "scripted" });
    const { turn } = (await client.prompt(id, "read it")) as { turn: string };
    await collect(client, id, settled(turn));
    const page = await browser.newPage();
    // How much text the page searched for a message's end ("\n\n"), counted as it searches: up to where the search
    // found one, not to the piece's end. (Counting to the end counted a piece that holds several messages once per
    // message: how the stream is cut into pieces, which a loaded machine changes, moved the count past the bound.)
    await page.addInitScript(() => {
      const indexOf = String.prototype.indexOf;
      const counted = globalThis as unknown as { searched: number };
      counted.searched = 0;
      String.prototype.indexOf = function (this: string, needle: string, from?: number) {
        const found = indexOf.call(this, needle, from);
        if (needle === "\n\n")
          counted.searched += (found < 0 ? this.length : found + needle.length) - Math.max(0, from ?? 0);
        return found;
      };
    });
    try {
      await page.goto(`${own.url}/#token=${own.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("[data-tool=big] summary").textContent()).toContain("done");
      const searched = await page.evaluate(() => (globalThis as unknown as { searched: number }).searched);
      // Each character of the stream about once (searching all of the message so far for each piece: several times).
      expect(searched).toBeGreaterThan(RESULT * 0.9);
      expect(searched).toBeLessThan(RESULT * 1.5);
    } finally {
      await page.close();
    }
  });
});

describe("web UI event stream whose lines end in CR LF or CR", () => {
  it.each([
    ["\r\n", "CR LF"],
    ["\r", "CR"],
  ])("reads every event (%j, %s) as the SSE spec allows, and follows on", async (end) => {
    const event = (seq: number, type: string, data: object) =>
      JSON.stringify({ seq, ts: new Date().toISOString(), session: "s", type, data });
    const body = [
      `id: 1${end}data: ${event(1, "session.opened", { harness: "echo" })}${end}${end}`,
      `: keep-alive${end}${end}`,
      `id: 2${end}data: ${event(2, "user.prompt", { text: "over a proxy" })}${end}${end}`,
    ].join("");
    const { page, asked } = await streamAnswered(200, "text/event-stream", body);
    try {
      await expect.poll(() => page.locator("#transcript").textContent()).toContain("over a proxy");
      expect(await page.locator("#transcript").textContent()).toContain("session opened on echo");
      // The stream ended (the route's body is all): the page asks again, from after event 2.
      await expect.poll(asked).toBeGreaterThan(1);
      expect(await page.locator(".msg.user").count()).toBe(1);
      expect(await page.locator("#s-stream").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });
});

describe("web UI failing to show an event", () => {
  it("stops there, says why and keeps the transcript, instead of reading it again every second", async () => {
    const event = (seq: number, type: string, data: object) =>
      JSON.stringify({ seq, ts: new Date().toISOString(), session: "s", type, data });
    const body = [
      `id: 1\ndata: ${event(1, "session.opened", { harness: "echo" })}\n\n`,
      `id: 2\ndata: ${event(2, "user.prompt", { text: "BOOM" })}\n\n`,
      `id: 3\ndata: ${event(3, "user.prompt", { text: "after it" })}\n\n`,
    ].join("");
    // Drawing any text that says BOOM fails, the note that would name the failed event included.
    const { page, asked } = await streamAnswered(
      200,
      "text/event-stream",
      body,
      `const append = Element.prototype.append;
      Element.prototype.append = function (...nodes) {
        if (nodes.some((node) => typeof node === "string" && node.includes("BOOM"))) throw new Error("BOOM");
        return append.apply(this, nodes);
      };`,
    );
    try {
      await expect.poll(() => page.locator("#conn").textContent()).toBe("stopped");
      expect(await page.locator("#s-stream").textContent()).toMatch(
        /^event 2 \(user\.prompt\) could not be shown: .*BOOM.*Reload the page/,
      );
      expect(await page.locator("#transcript").textContent()).toContain("session opened on echo");
      expect(asked()).toBe(1);
    } finally {
      await page.close();
    }
  });
});

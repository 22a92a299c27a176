// The web UI against a long session and a crowded tenant, in a real browser: opening a session with many turns
// reads the log back without asking for the session list once per turn, a session opened while another's view is
// on its way is the only one followed, and an event stream the daemon refuses (the tenant's limit of streams)
// shows why, instead of "reconnecting…" and nothing else; a turn of several messages shows each one, in order, and
// their usage together; a session of thousands of events opens near its end, and shows them all on Show all.
import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { HarnessEvent } from "../core/harness.js";
import type { MessageData } from "../protocol/runner.js";
import { scripted } from "../testing/brain.js";
import { collect, settled } from "../testing/http.js";
import { retireUpTo } from "../testing/retired-log.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon({ eventStreamsPerTenant: 1 });
const browser = useTestBrowser();

/** A page signed in with `token`, kept as the daemon's link would keep it. */
async function signedIn(token = t.tokens.admin): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${t.url}/#token=${token}`);
  await page.locator("#main").waitFor();
  return page;
}

describe("web UI on a long session", () => {
  it("reads back forty turns without asking for the session list once per turn", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    for (let i = 0; i < 40; i++) {
      const { turn } = (await client.prompt(id, `turn ${i}`)) as { turn: string };
      await collect(client, id, settled(turn));
    }
    const page = await signedIn();
    try {
      // A hidden tab skips the list's 3 s refresh, which a slow machine's replay would otherwise meet.
      await page.evaluate(`Object.defineProperty(document, "visibilityState", { get: () => "hidden" })`);
      let asked = 0;
      await page.route(
        (url) => url.pathname === "/v1/sessions",
        (route) => {
          if (route.request().method() === "GET") asked++;
          return route.continue();
        },
      );
      await page.goto(`${t.url}/#session=${id}`);
      await expect.poll(() => page.locator(".msg.user").count()).toBe(40);
      // The page's own fetch, answered, comes after every list request the replay made.
      await page.evaluate(() => fetch("/healthz").then((res) => res.status));
      // Eighty turn events, all older than the view the page read first: none of them asks for the list again.
      expect(asked).toBe(0);
      // A turn of now does: the list's status of the session changes with it.
      await client.prompt(id, "turn 40");
      await expect.poll(() => page.locator(".msg.user").count()).toBe(41);
      await expect.poll(() => asked).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });
});

describe("web UI when the tenant has no room for another stream", () => {
  it("says why the stream is refused while it waits to try again", async () => {
    // Another tenant's, whose one stream is the test's own.
    const client = t.client({ token: t.tokens.other });
    const { id } = await client.create({ harness: "echo" });
    // The tenant's one stream, held open by another reader.
    const abort = new AbortController();
    const held = (async () => {
      try {
        for await (const _ of client.events(id, { signal: abort.signal })) {
        }
      } catch {}
    })();
    const page = await signedIn(t.tokens.other);
    try {
      await page.goto(`${t.url}/#session=${id}`);
      await expect.poll(() => page.locator("#s-stream").textContent()).toContain("event_streams_per_tenant");
      expect(await page.locator("#conn").textContent()).toBe("reconnecting…");
      abort.abort();
      await held;
      // Room again: the page's next try is let in, and the reason goes.
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      expect(await page.locator("#s-stream").textContent()).toBe("");
    } finally {
      abort.abort();
      await page.close();
    }
  });
});

describe("web UI resuming past the log's end", () => {
  it("stops and says why, instead of trying again every second", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const page = await signedIn();
    try {
      // As after the session was deleted and made again under its id: the page's cursor is past the log's end.
      await page.route(
        (url) => url.pathname.endsWith("/events"),
        (route) => route.continue({ headers: { ...route.request().headers(), "last-event-id": "1000" } }),
      );
      await page.goto(`${t.url}/#session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("stopped");
      expect(await page.locator("#s-stream").textContent()).toContain("1000");
    } finally {
      await page.close();
    }
  });
});

describe("web UI opening one session while another is on its way", () => {
  it("follows only the session opened last", async () => {
    const client = t.client();
    const alpha = (await client.create({ harness: "echo" })).id;
    const beta = (await client.create({ harness: "echo" })).id;
    for (const [id, text] of [
      [alpha, "alpha"],
      [beta, "beta"],
    ] as const) {
      const { turn } = (await client.prompt(id, text)) as { turn: string };
      await collect(client, id, settled(turn));
    }
    const page = await signedIn();
    const streamsOfAlpha: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes(`/v1/sessions/${alpha}/events`)) streamsOfAlpha.push(r.url());
    });
    try {
      // Alpha's view is held until beta is open and shown.
      const held: Route[] = [];
      await page.route(
        (url) => url.pathname === `/v1/sessions/${alpha}`,
        (route) => {
          held.push(route);
        },
      );
      await page.goto(`${t.url}/#session=${alpha}`);
      // (Asked once or twice: sign-in, still finishing, opens the session the address names too.)
      await expect.poll(() => held.length).toBeGreaterThan(0);
      await page.goto(`${t.url}/#session=${beta}`);
      await expect.poll(() => page.locator("#transcript").textContent()).toContain("echo #1: beta");
      for (const route of held) await route.continue();
      // A turn of beta's after alpha's view came: alpha's stream, had one started, would have shown it by now.
      await client.prompt(beta, "gamma");
      await expect.poll(() => page.locator("#transcript").textContent()).toContain("echo #2: gamma");
      expect(await page.locator("#transcript").textContent()).not.toContain("alpha");
      expect(streamsOfAlpha).toEqual([]);
      expect(await page.locator("#s-title").textContent()).toBe(beta);
    } finally {
      await page.close();
    }
  });
});

describe("web UI on a session whose oldest events retention dropped", () => {
  it("says which events are no longer kept, then shows the rest", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const first = (await client.prompt(id, "first turn")) as { turn: string };
    await collect(client, id, settled(first.turn));
    const second = (await client.prompt(id, "second turn")) as { turn: string };
    await collect(client, id, settled(second.turn));
    await client.close(id);
    await retireUpTo(t.home, id, 3);
    const page = await signedIn();
    try {
      await page.goto(`${t.url}/#session=${id}`);
      const notice = page.locator("[data-dropped]");
      await expect
        .poll(() => notice.textContent())
        .toContain("events 1–3 of this session are no longer kept");
      await expect.poll(() => page.locator("#transcript").textContent()).toContain("echo #2: second turn");
      // The notice comes first: what follows it is every event from the fourth on.
      expect(await page.locator("#transcript > *").first().getAttribute("data-dropped")).toBe("0:4");
    } finally {
      await page.close();
    }
  });
});

describe("web UI on a session of thousands of events", () => {
  /** What the scripted harness's next turn does: stream `deltas` deltas, after asking a question when `ask`. */
  let next = { deltas: 1, text: "", ask: false };
  const steps = scripted(async (options, turn) => {
    const { deltas, text, ask } = next;
    const signal = new AbortController().signal;
    const answer = ask ? options.ask(turn, { question: "Go on?", options: ["yes"] }, signal) : undefined;
    for (let i = 0; i < deltas; i++)
      options.emit({ type: "assistant.delta", turn, data: { text: i === 0 ? text : "." } });
    if (answer) options.emit({ type: "assistant.delta", turn, data: { text: ` answered ${await answer}` } });
  });
  const own = useTestDaemon({ factories: [steps] });

  async function opened(id: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${own.url}/#token=${own.tokens.admin}&session=${id}`);
    return page;
  }

  it("opens at the last turn, not the whole log, and shows the rest on Show all", async () => {
    const client = own.client();
    const { id } = await client.create({ harness: "scripted" });
    for (const [deltas, text] of [
      [3000, "the long turn"],
      [1, "the last turn"],
    ] as const) {
      next = { deltas, text, ask: false };
      const { turn } = (await client.prompt(id, text)) as { turn: string };
      await collect(client, id, settled(turn));
    }
    const page = await opened(id);
    try {
      const transcript = () => page.locator("#transcript").textContent();
      await expect.poll(transcript).toContain("the last turn");
      expect(await transcript()).not.toContain("the long turn");
      expect(await page.locator(".msg.user").count()).toBe(1);
      expect(await page.locator("[data-skipped]").textContent()).toMatch(/^events 1–30\d\d are not shown/);
      // The whole log: a turn of 3,000 deltas, which froze the tab for good while each event laid the page out.
      await page.click("button.show-all");
      await expect.poll(() => page.locator(".msg.user").count()).toBe(2);
      expect(await transcript()).toContain("the long turn...");
      // Written a frame at a time, not a text node per delta (each added after reading back all before it).
      const nodes = await page
        .locator(".msg.assistant .text")
        .first()
        .evaluate((node) => node.childNodes.length);
      expect(nodes).toBeLessThan(1000);
      expect(await page.locator("[data-skipped]").count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("opens in the middle of a long turn, shown as running, with the question it asked before still to answer", async () => {
    const client = own.client();
    const { id } = await client.create({ harness: "scripted" });
    next = { deltas: 2500, text: "while it waits", ask: true };
    const { turn } = (await client.prompt(id, "ask me")) as { turn: string };
    await expect.poll(async () => (await client.session(id)).last_seq).toBeGreaterThan(2500);
    const page = await opened(id);
    try {
      await page.locator("[data-skipped]").waitFor();
      expect(await page.locator("#turn-state").textContent()).toBe("turn running…");
      expect(await page.locator("#transcript").textContent()).not.toContain("while it waits");
      await page.locator(".request button", { hasText: "yes" }).click();
      await collect(client, id, settled(turn));
      await expect.poll(() => page.locator("#transcript").textContent()).toContain("answered yes");
      await expect.poll(() => page.locator("#turn-state").textContent()).toBe("");
      expect(await page.locator(".request").count()).toBe(1);
    } finally {
      await page.close();
    }
  });
});

describe("web UI on a turn of several messages", () => {
  /** What the scripted harness's next turn says. */
  let said: (turn: string) => HarnessEvent[] = () => [];
  const own = useTestDaemon({
    factories: [
      scripted(async (options, turn) => {
        for (const event of said(turn)) options.emit(event);
      }),
    ],
  });

  /** A page showing a new session's one turn, of these events. */
  async function turnOf(events: (turn: string) => HarnessEvent[]): Promise<Page> {
    said = events;
    const client = own.client();
    const { id } = await client.create({ harness: "scripted" });
    const { turn } = (await client.prompt(id, "look it up")) as { turn: string };
    await collect(client, id, settled(turn));
    const page = await browser.newPage();
    await page.goto(`${own.url}/#token=${own.tokens.admin}&session=${id}`);
    await page.locator(".msg.assistant").first().waitFor();
    return page;
  }

  it("shows every message of the turn, not only its first", async () => {
    // A tool loop's turn as a compacted log holds it: one message per step, none of their deltas.
    const page = await turnOf((turn) =>
      unstreamed(turn, [{ text: "looking it up. " }, { text: "found it." }]),
    );
    try {
      await expect.poll(() => page.locator(".msg.assistant .text").textContent()).toContain("found it.");
      expect(await page.locator(".msg.assistant .text").textContent()).toBe("looking it up. found it.");
    } finally {
      await page.close();
    }
  });

  it("shows what the whole turn spent, the usage of all its messages together", async () => {
    const page = await turnOf((turn) =>
      unstreamed(turn, [
        { text: "looking it up. ", usage: { input: 100, output: 20, cache_read: 50 } },
        { text: "found it.", usage: { input: 300, output: 40, cost: 0.0125 }, stop_reason: "end_turn" },
      ]),
    );
    try {
      await expect
        .poll(() => page.locator(".msg.assistant .meta").textContent())
        .toBe("400 in · 60 out · 50 cached · $0.0125 · end_turn");
    } finally {
      await page.close();
    }
  });

  it("shows the text that came after a tool call below it, where it happened", async () => {
    // Claude Code's turn: a message, the tool it called and its result, then the message that read the result.
    const page = await turnOf((turn) => [
      { type: "assistant.delta", turn, data: { text: "looking it up." } },
      { type: "assistant.message", turn, data: { text: "looking it up.", usage: { input: 10, output: 2 } } },
      { type: "tool.call", turn, data: { id: "read-1", name: "Read", arguments: { path: "notes.md" } } },
      {
        type: "tool.result",
        turn,
        data: { id: "read-1", content: [{ type: "text", text: "42" }], is_error: false },
      },
      { type: "assistant.delta", turn, data: { text: "It says 42." } },
      { type: "assistant.message", turn, data: { text: "It says 42.", usage: { input: 30, output: 4 } } },
    ]);
    try {
      const shown = () =>
        page
          .locator("#transcript > *")
          .evaluateAll((nodes) =>
            nodes.map((node) =>
              node.matches(".msg.assistant") ? node.querySelector(".text")!.textContent : node.className,
            ),
          );
      await expect.poll(shown).toEqual(["note", "msg user", "looking it up.", "tool", "It says 42."]);
      // The turn's usage once, below its last text.
      expect(await page.locator(".msg.assistant .meta").allTextContents()).toEqual(["", "40 in · 6 out"]);
    } finally {
      await page.close();
    }
  });
});

/** A turn's messages as a compacted log holds them: no deltas. */
function unstreamed(turn: string, messages: MessageData[]): HarnessEvent[] {
  return messages.map((data) => ({ type: "assistant.message", turn, data }));
}

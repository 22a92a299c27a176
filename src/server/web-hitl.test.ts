// The web UI's request cards in a real browser when another client answers first: the card says what the answer
// was and who gave it, and the page's own answer, refused because it came second, does not hide that. One refused
// because another client controls the session says to press Take control.
import type { Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { collect, NUI_RELEASE_QUESTION, raw, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

/** A page on a new session whose every tool call is asked about, after it sent `prompt`: its request card. */
async function askedOnPage(prompt: string) {
  const { id } = await t.client().create({
    harness: "echo",
    config: { tools: ["echo"] },
    permissions: { default: "ask" },
  });
  const page = await browser.newPage();
  await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
  await page.locator("#session").waitFor();
  await page.fill("#prompt", prompt);
  await page.click("#send");
  return { page, card: page.locator(".request") };
}

describe("web UI's permission card when another client answered first", () => {
  it("shows that client's answer and who gave it, not the refusal of the page's own", async () => {
    const laptop = t.client({ client: "laptop-2" });
    const { id } = await laptop.create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { default: "ask" },
    });
    const { turn } = (await laptop.prompt(id, "echo: both of us")) as { turn: string };
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      const card = page.locator(".request");
      await card.waitFor();
      const requestId = (await card.getAttribute("data-request")) ?? "";
      // The page's Allow is held on its way while the laptop's Deny is logged and shown.
      let held: Route | undefined;
      await page.route(
        (url) => url.pathname.includes("/requests/"),
        (route) => {
          held = route;
        },
      );
      await card.getByRole("button", { name: "Allow" }).click();
      await expect.poll(() => held !== undefined).toBe(true);
      await laptop.answer(id, requestId, { decision: "deny", reason: "not this one" });
      const status = card.locator(".request-status");
      await expect.poll(() => status.textContent()).toContain("denied: not this one");
      const refused = page.waitForResponse((res) => res.url().includes("/requests/"));
      await held!.continue();
      // The page's answer came second: refused, which must not replace what the card says.
      expect((await refused).status()).toBe(409);
      // A call of the page's own, answered, comes after it has read the refusal.
      await page.evaluate(() => fetch("/healthz").then((res) => res.status));
      expect(await status.textContent()).toBe("denied: not this one (by admin, client laptop-2)");
      expect(await card.locator("button").count()).toBe(0);
      await collect(laptop, id, settled(turn));
    } finally {
      await page.close();
    }
  });

  it("says an answer the page gave was its own", async () => {
    const { page, card } = await askedOnPage("echo: mine");
    try {
      await card.getByRole("button", { name: "Allow" }).click();
      await expect.poll(() => card.locator(".request-status").textContent()).toBe("allowed (by you)");
    } finally {
      await page.close();
    }
  });

  it("names the status of an answer refused by something other than the daemon (a proxy's HTML page)", async () => {
    const { page, card } = await askedOnPage("echo: through a proxy");
    try {
      await card.waitFor();
      // What a reverse proxy in front of the daemon answers when the daemon is away.
      const answers = (url: URL) => url.pathname.includes("/requests/");
      await page.route(answers, (route) =>
        route.fulfill({
          status: 502,
          contentType: "text/html",
          body: "<html><h1>502 Bad Gateway</h1></html>",
        }),
      );
      await card.getByRole("button", { name: "Allow" }).click();
      const status = card.locator(".request-status");
      await expect.poll(() => status.textContent()).toContain("HTTP 502");
      expect(await status.textContent()).toContain("not JSON (text/html)");
      await page.unroute(answers);
      await card.getByRole("button", { name: "Allow" }).click();
      await expect.poll(() => status.textContent()).toBe("allowed (by you)");
    } finally {
      await page.close();
    }
  });
});

describe("web UI's permission card on a session another client controls", () => {
  it("says to press Take control, not which API call takes it, and answers once it is pressed", async () => {
    const cli = t.client({ client: "the-cli" });
    const { id } = await cli.create({
      harness: "echo",
      config: { tools: ["echo"] },
      permissions: { default: "ask" },
    });
    await cli.takeControl(id, "the-cli");
    const { turn } = (await cli.prompt(id, "echo: theirs")) as { turn: string };
    const page = await browser.newPage();
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      const card = page.locator(".request");
      const status = card.locator(".request-status");
      await card.getByRole("button", { name: "Allow" }).click();
      await expect.poll(() => status.textContent()).toContain("Take control");
      expect(await status.textContent()).toContain('client "the-cli" controls this session');
      expect(await status.textContent()).not.toContain("POST");
      await page.click("#take-control");
      await expect.poll(() => page.locator("#s-control").textContent()).toBe("you control it");
      await card.getByRole("button", { name: "Allow" }).click();
      await expect.poll(() => status.textContent()).toBe("allowed (by you)");
      await collect(cli, id, settled(turn));
    } finally {
      await page.close();
    }
  });
});

/** A page on a session whose long turn runs, with a nui question asked in it. */
async function questionOnPage() {
  const client = t.client();
  const { id } = await client.create({ harness: "echo", config: { options: { delay_ms: 40 } } });
  const { turn } = await client.prompt(id, Array.from({ length: 300 }, (_, i) => `w${i}`).join(" "));
  const created = await raw(t.url, "POST", "/api/hitl/requests", {
    token: t.tokens.admin,
    body: { kind: "question", sessionId: id, payload: NUI_RELEASE_QUESTION },
  });
  expect(created.status).toBe(201);
  const page = await browser.newPage();
  await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
  return { client, id, turn, page };
}

describe("web UI's question card from the keyboard alone", () => {
  it("sends the typed answer on Enter, as a form would, and nothing while the field is empty", async () => {
    const { client, id, turn, page } = await questionOnPage();
    try {
      const card = page.locator(".request");
      await card.locator("input.answer").focus();
      // A stray Enter in the empty field: answering with nothing would settle the question, for good.
      await page.keyboard.press("Enter");
      await expect
        .poll(() => card.locator(".request-status").textContent())
        .toBe("Type an answer first, or Decline.");
      expect(await card.getAttribute("class")).not.toContain("answered");
      await page.keyboard.type("somewhere else");
      await page.keyboard.press("Enter");
      await expect
        .poll(() => card.locator(".request-status").textContent())
        .toContain("answered: somewhere else");
      await page.click("#interrupt"); // the page controls the session now that it answered
      await collect(client, id, settled(turn as string));
    } finally {
      await page.close();
    }
  });

  it("declines with its own button: logged as declined, shown so, not as no one answering", async () => {
    const { client, id, turn, page } = await questionOnPage();
    try {
      const card = page.locator(".request");
      await card.getByRole("button", { name: "Decline" }).click();
      await expect.poll(() => card.locator(".request-status").textContent()).toBe("declined (by you)");
      const logged = await client.log(id, 0, 10_000);
      const answered = logged.events.find((e) => e.type === "question.answered");
      expect(answered?.data).toMatchObject({ answer: "", declined: true });
      await page.click("#interrupt");
      await collect(client, id, settled(turn as string));
    } finally {
      await page.close();
    }
  });
});

// What a signed-in page read stays out of the browser's HTTP cache (a real browser): the daemon's answers (the
// session list, a session's view, its log) came without Cache-Control, so the browser kept them, and any page of
// the daemon's origin read them back from the cache without a token (fetch's cache: "force-cache"), after
// sign-out too, and they stayed on the disk of a shared machine. Every data answer says no-store.
import { describe, expect, it } from "vitest";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

describe("web UI and the browser's cache", () => {
  it("leaves nothing a token read in the cache for a request without one", async () => {
    const { id } = await t.client().create({ harness: "echo" });
    const page = await browser.newPage();
    /** Every read of the API the page made with its token, but its event stream (which never ends). */
    const reads = new Set<string>();
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (request.method() === "GET" && url.pathname.startsWith("/v1/") && !url.pathname.endsWith("/events"))
        reads.add(url.pathname + url.search);
    });
    try {
      await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
      await expect.poll(() => page.locator("#conn").textContent()).toBe("live");
      await expect.poll(() => page.locator(`#sessions li[data-session="${id}"]`).count()).toBe(1);
      // What the page itself asked for with its token, asked again without one, from the cache if it is there.
      expect(reads.has(`/v1/sessions/${id}`)).toBe(true);
      const cached = await page.evaluate(
        (paths) =>
          Promise.all(
            paths.map(async (path) => {
              // The browser's fetch (the test's types are Node's, which has no HTTP cache nor this option).
              const res = await fetch(path, { cache: "force-cache" } as object);
              return `${res.status} ${path}: ${(await res.text()).slice(0, 60)}`;
            }),
          ),
        [...reads],
      );
      for (const answer of cached) expect(answer).toMatch(/^401 /);
      const res = await fetch(`${t.url}/v1/sessions`, {
        headers: { authorization: `Bearer ${t.tokens.admin}` },
      });
      expect(res.headers.get("cache-control")).toBe("no-store");
    } finally {
      await page.close();
    }
  });
});

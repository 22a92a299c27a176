// A provider's redirect is not followed: fetch would resend the conversation, and across origins Anthropic's and
// Gemini's key headers with it, to wherever the redirect points. Nor is a web page taken for an answer.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiTestBed } from "./testing/bed.js";
import { PROVIDER_FORMATS } from "./testing/provider.js";

const bed = apiTestBed();
// Answers every request with a redirect to the same path on the fake provider: another origin (its port).
const redirector = createServer((req, res) => {
  req.resume();
  res.writeHead(307, { location: `${bed.fake.url}${req.url}` });
  res.end();
});
beforeAll(() => new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve)));
afterAll(() => new Promise<void>((resolve) => redirector.close(() => resolve())));

describe.each(Object.keys(PROVIDER_FORMATS))("a redirect from %s's base URL", (provider) => {
  it("fails the request, naming it and the fix, and sends nothing where it points", async () => {
    const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    const session = await bed.sessionAt(provider, url);
    const outcome = await (await session.prompt("the secret plan")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toContain(
      `${provider}'s base URL answered a redirect (HTTP 307 to ${bed.fake.url}); Brain does not follow`,
    );
    expect(outcome.error?.message).toMatch(/set the provider's base_url to the address it names$/);
    expect(bed.fake.requests).toEqual([]);
  });
});

describe.each(Object.keys(PROVIDER_FORMATS))("a web page from %s's base URL with a 200", (provider) => {
  it("fails the request, saying it was a page and the fix, not that a stream ended early", async () => {
    const session = await bed.brain({ provider }).brain.create({
      harness: "api",
      config: { model: `${provider}:fake-model`, options: { retries: 0 } },
    });
    const page = "<html><body>Sign in to the Wi-Fi</body></html>";
    bed.fake.script([{ error: { status: 200, message: "", page } }]);
    const outcome = await (await session.prompt("x")).settled;
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toContain(
      `${provider}'s base URL answered HTTP 200 with a web page, not its API's answer: set the provider's base_url`,
    );
  });
});

// The credential proxy against the fake provider on 127.0.0.1: the real key goes on in the vendor's header and the
// agent's token does not, answers stream through as they come, and anything not under a live token, or
// too large, is refused.
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { anthropic, openaiResponses } from "../../testing/fake-provider/wire-clients.js";
import { MAX_REQUEST_BYTES, type ProxyWire } from "./credential-proxy.js";
import { KEY, useProxyBed } from "./testing/proxy-bed.js";

const bed = useProxyBed();
const proxy = (wire: ProxyWire, base_url: string) => bed.proxy(wire, base_url);

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("credential proxy", () => {
  it("forwards an Anthropic request with the real key in x-api-key, never the agent's token", async () => {
    const p = await proxy("messages", bed.provider.url);
    bed.provider.script([{ text: "hi there" }]);
    const res = await post(`${p.url}/v1/messages`, anthropic.body("hello", false), {
      "x-api-key": p.token,
      authorization: `Bearer ${p.token}`,
    });
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain("hi there");
    const [seen] = bed.provider.requests;
    expect(seen?.path).toBe("/v1/messages");
    expect(seen?.headers["x-api-key"]).toBe(KEY);
    expect(seen?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen?.headers)).not.toContain(p.token);
  });

  it("forwards an OpenAI Responses request with the real key as a bearer token, under the base URL's path", async () => {
    const p = await proxy("responses", `${bed.provider.url}/v1`);
    bed.provider.script([{ text: "fine" }]);
    const res = await post(`${p.url}/responses`, openaiResponses.body("hello", false), {
      authorization: `Bearer ${p.token}`,
    });
    expect(res.status).toBe(200);
    expect(bed.provider.requests[0]?.path).toBe("/v1/responses");
    expect(bed.provider.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("forwards a Gemini API request with the real key in x-goog-api-key; the agent's, in the header or ?key=, is dropped", async () => {
    // A provider that takes only the real key: the agent's token, left in either place, would be refused.
    const secured = await startFakeProvider({ apiKey: KEY });
    try {
      const p = await proxy("gemini", secured.url);
      secured.script([{ text: "from gemini" }]);
      const path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent";
      const body = { contents: [{ role: "user", parts: [{ text: "hello" }] }] };
      const res = await post(`${p.url}${path}?alt=sse&key=${p.token}`, body, { "x-goog-api-key": p.token });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('"finishReason":"STOP"');
      const [seen] = secured.requests;
      expect(seen?.path).toBe(`${path}?alt=sse`);
      expect(seen?.headers["x-goog-api-key"]).toBe(KEY);
      expect(JSON.stringify(seen)).not.toContain(p.token);
    } finally {
      await secured.close();
    }
  });

  it("drops the agent's ?key= on every wire, and headers that pick the account or carry a credential of its own", async () => {
    const p = await proxy("responses", `${bed.provider.url}/v1`);
    bed.provider.script([{ text: "fine" }]);
    const res = await post(
      `${p.url}/responses?key=${p.token}&trace=1`,
      openaiResponses.body("hello", false),
      {
        "openai-organization": "org-the-agents-choice",
        "openai-project": "proj-the-agents-choice",
        "chatgpt-account-id": "acct-the-agents-choice",
        "x-goog-user-project": "billing-the-agents-choice",
        cookie: "session=the-agents",
        originator: "codex_exec",
      },
    );
    expect(res.status).toBe(200);
    const [seen] = bed.provider.requests;
    expect(seen?.path).toBe("/v1/responses?trace=1");
    expect(JSON.stringify(seen?.headers)).not.toContain("the-agents");
    expect(seen?.headers.originator).toBe("codex_exec");
    const claude = await proxy("messages", bed.provider.url);
    bed.provider.script([{ text: "fine" }]);
    await post(`${claude.url}/v1/messages?beta=true&key=${claude.token}`, anthropic.body("hello", false));
    expect(bed.provider.requests[1]?.path).toBe("/v1/messages?beta=true");
  });

  it("streams an answer as it comes: frames arrive while the provider still holds the stream open", async () => {
    const p = await proxy("messages", bed.provider.url);
    bed.provider.script([{ text: "one two three four", chunkSize: 4, stallAfter: 4 }]);
    const aborted = new AbortController();
    const res = await fetch(`${p.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(anthropic.body("hello", true)),
      signal: aborted.signal,
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = "";
    // A buffering proxy would wait for the stream's end, which never comes: this read would never return.
    while (!text.includes("content_block_delta")) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    aborted.abort();
    await reader.cancel().catch(() => {});
  });

  it("forwards a request sent with Expect: 100-continue (curl's, for a large body), the body after the 100", async () => {
    const p = await proxy("messages", bed.provider.url);
    bed.provider.script([{ text: "continued" }]);
    const body = JSON.stringify(anthropic.body("x".repeat(2 * 1024 * 1024), false));
    const answer = await new Promise<{ status: number; text: string; continued: boolean }>(
      (resolve, reject) => {
        let continued = false;
        const sent = request(`${p.url}/v1/messages`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            expect: "100-continue",
            // A header the Connection header names is this hop's alone: it does not go on either.
            connection: "keep-alive, x-this-hop",
            "x-this-hop": "only-here",
            te: "trailers",
          },
        });
        sent.on("continue", () => {
          continued = true;
          sent.end(body);
        });
        sent.on("response", (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text, continued }));
        });
        sent.on("error", reject);
      },
    );
    expect(answer.text).toContain("continued");
    expect(answer).toMatchObject({ status: 200, continued: true });
    const [seen] = bed.provider.requests;
    expect(seen?.headers["x-api-key"]).toBe(KEY);
    expect(seen?.headers.expect).toBeUndefined();
    expect(seen?.headers["x-this-hop"]).toBeUndefined();
    expect(seen?.headers.te).toBeUndefined();
  });

  it("refuses a request under a wrong token, outside any token, or after the proxy closed", async () => {
    const p = await proxy("messages", bed.provider.url);
    const origin = new URL(p.url).origin;
    const body = anthropic.body("hello", false);
    expect((await post(`${origin}/${p.token.slice(1)}/v1/messages`, body)).status).toBe(403);
    expect((await post(`${origin}/${p.token}x/v1/messages`, body)).status).toBe(403);
    expect((await post(`${origin}/v1/messages`, body)).status).toBe(403);
    const refused = await post(`${origin}/nope/v1/messages`, body);
    expect(await refused.text()).not.toContain(KEY);
    await p.close();
    await expect(post(`${p.url}/v1/messages`, body)).rejects.toThrow();
    expect(bed.provider.requests).toEqual([]);
  });

  it("refuses a body over the limit with a clear 413, and forwards nothing", async () => {
    const p = await proxy("messages", bed.provider.url);
    const res = await post(`${p.url}/v1/messages`, "x".repeat(MAX_REQUEST_BYTES + 1));
    expect(res.status).toBe(413);
    expect(await res.text()).toContain(
      `larger than the credential proxy's limit of ${MAX_REQUEST_BYTES} bytes`,
    );
    expect(bed.provider.requests).toEqual([]);
  });

  it("passes a body on as it comes, holding none of it whole: the provider reads its start while the client holds the rest", async () => {
    // A provider that counts the bytes it has read: a proxy that held each body whole until its end held up to
    // the limit per request, for any number of an agent's requests at once, in the memory all tenants share.
    let read = 0;
    const upstream = createServer((req, res) => {
      req.on("data", (chunk: Buffer) => {
        read += chunk.length;
      });
      req.on("end", () => res.end(JSON.stringify({ read })));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    let sent: ReturnType<typeof request> | undefined;
    try {
      const p = await proxy("messages", `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
      const half = Buffer.alloc(1024 * 1024, "a");
      const sending = request(`${p.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": half.length * 2 },
      });
      sent = sending;
      const answered = new Promise<string>((resolve, reject) => {
        sending.on("response", (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => resolve(text));
        });
        sending.on("error", reject);
      });
      answered.catch(() => {}); // a failed wait destroys the request below: that is not another failure
      sending.write(half);
      await expect.poll(() => read, { timeout: 20_000 }).toBe(half.length);
      sending.end(half);
      expect(JSON.parse(await answered)).toEqual({ read: half.length * 2 });
    } finally {
      sent?.destroy();
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it("cuts off a body sent without a length once it passes the limit, with a 413", async () => {
    const p = await proxy("messages", bed.provider.url);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const sent = request(`${p.url}/v1/messages`, { method: "POST" }); // chunked: no length declared
      sent.on("response", (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          sent.destroy();
          resolve({ status: res.statusCode ?? 0, text });
        });
      });
      sent.on("error", reject);
      const piece = Buffer.alloc(1024 * 1024, "x");
      let left = MAX_REQUEST_BYTES / piece.length + 1;
      const more = () => {
        while (left > 0) {
          left--;
          if (!sent.write(piece)) return void sent.once("drain", more);
        }
        sent.end();
      };
      more();
    });
    expect(answer.status).toBe(413);
    expect(answer.text).toContain("larger than the credential proxy's limit");
    expect(bed.provider.requests).toEqual([]);
  });

  it("refuses a body declared over the limit before a client waiting for 100 Continue sends it", async () => {
    const p = await proxy("messages", bed.provider.url);
    const answer = await new Promise<{ status: number; text: string; continued: boolean }>(
      (resolve, reject) => {
        let continued = false;
        const sent = request(`${p.url}/v1/messages`, {
          method: "POST",
          headers: { "content-length": MAX_REQUEST_BYTES + 1, expect: "100-continue" },
        });
        // Told to go on, the client would send 64 MB only to be cut off: it is told no first.
        sent.on("continue", () => {
          continued = true;
        });
        sent.on("response", (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => {
            sent.destroy();
            resolve({ status: res.statusCode ?? 0, text, continued });
          });
        });
        sent.on("error", reject);
      },
    );
    expect(answer).toMatchObject({ status: 413, continued: false });
    expect(answer.text).toContain("larger than the credential proxy's limit");
    expect(bed.provider.requests).toEqual([]);
  });

  it("says a provider it cannot reach is unreachable (502), without the key", async () => {
    const gone = await startFakeProvider();
    const url = gone.url;
    await gone.close();
    const p = await proxy("messages", url);
    const res = await post(`${p.url}/v1/messages`, anthropic.body("hello", false));
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).toContain("the provider could not be reached");
    expect(text).not.toContain(KEY);
  });
});

// The provider's key never reaches the agent in an answer: a provider's error body that quotes the key, a
// gateway's header that echoes it (as it is, URL-encoded, base64-encoded, with its slashes escaped), a streamed body
// that splits it over two chunks, or a compressed body that hides it from a plain search all reach the agent with
// the key replaced.
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { anthropic } from "../../testing/fake-provider/wire-clients.js";
import { givesAway } from "../../testing/gives-away.js";
import { CredentialProxy } from "./credential-proxy.js";
import { KEY, useProxyBed, withUpstream } from "./testing/proxy-bed.js";

const bed = useProxyBed();
const proxy = (base_url: string) => bed.proxy("messages", base_url);

function post(p: CredentialProxy): Promise<Response> {
  return fetch(`${p.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(anthropic.body("hello", true)),
  });
}

describe("credential proxy: the key kept out of answers", () => {
  it("redacts the key from a provider's error body that quotes it", async () => {
    const p = await proxy(bed.provider.url);
    bed.provider.script([{ error: { status: 401, message: `invalid x-api-key: ${KEY}` } }]);
    const res = await post(p);
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(text).toContain("invalid x-api-key: [redacted:api_key]");
    expect(text).not.toContain(KEY);
  });

  it("redacts a key split over two chunks of a streamed body, and one a gateway echoes in a header", async () => {
    let rest: (() => void) | undefined;
    await withUpstream(
      (res) => {
        res.writeHead(400, { "content-type": "text/event-stream", "x-echo-key": `Bearer ${KEY}` });
        res.write(`event: error\ndata: {"message":"bad key ${KEY.slice(0, 12)}`);
        rest = () => res.end(`${KEY.slice(12)}, try another"}\n\n`);
      },
      async (url) => {
        const p = await proxy(url);
        const res = await post(p);
        expect(res.headers.get("x-echo-key")).toBe("Bearer [redacted:api_key]");
        const reader = res.body!.getReader();
        let text = "";
        // The first chunk's text before the held tail comes as it is; only then is the key's end sent.
        while (!text.includes("bad key")) {
          const { value } = await reader.read();
          text += new TextDecoder().decode(value);
        }
        expect(text).not.toContain(KEY.slice(0, 12));
        rest?.();
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          text += new TextDecoder().decode(read.value);
        }
        expect(text).toBe('event: error\ndata: {"message":"bad key [redacted:api_key], try another"}\n\n');
      },
    );
  });

  it("redacts a gateway key a gateway echoes URL-encoded, base64-encoded at any offset, or with its slashes escaped", async () => {
    const key = "gw+Key/0123456789=abcdefXYZ";
    const base64 = (text: string) => Buffer.from(text).toString("base64");
    const echoes = [
      `GET https://gateway.example/v1/models?key=${encodeURIComponent(key)}`,
      `form ${new URLSearchParams({ key })}`,
      `lower ${encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())}`,
      `authorization: Basic ${base64(`gateway:${key}`)}`,
      `authorization: Basic ${base64(`u:${key}`)}`,
      `authorization: Basic ${base64(`${key}:`)}`,
      `request ${Buffer.from(JSON.stringify({ headers: { "x-api-key": key } })).toString("base64url")}`,
      `{"x-api-key":"${key.replaceAll("/", "\\/")}"}`,
    ];
    for (const echo of echoes) expect(givesAway(echo, key)).toBe(true);
    await withUpstream(
      (res) => {
        res.writeHead(401, { "content-type": "text/plain", "x-echo": `Basic ${base64(`gateway:${key}`)}` });
        res.end(echoes.join("\n"));
      },
      async (url) => {
        const p = await CredentialProxy.start({ wire: "messages", api_key: key, base_url: url });
        try {
          const res = await post(p);
          expect(givesAway(res.headers.get("x-echo") ?? "", key)).toBe(false);
          const lines = (await res.text()).split("\n");
          expect(lines).toHaveLength(echoes.length);
          for (const line of lines) {
            expect(line).toContain("[redacted:api_key]");
            expect(givesAway(line, key), line).toBe(false);
          }
        } finally {
          await p.close();
        }
      },
    );
  });

  it("asks the provider for no compression, and decodes and redacts a gzipped answer it sends anyway", async () => {
    const asked: (string | undefined)[] = [];
    await withUpstream(
      (res, headers) => {
        asked.push(headers["accept-encoding"]);
        const body = gzipSync(JSON.stringify({ error: { message: `key ${KEY} refused` } }));
        res.writeHead(401, {
          "content-type": "application/json",
          "content-encoding": "gzip",
          "content-length": body.length,
        });
        res.end(body);
      },
      async (url) => {
        const p = await proxy(url);
        const res = await fetch(`${p.url}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "accept-encoding": "gzip, br" },
          body: "{}",
        });
        expect(res.headers.get("content-encoding")).toBeNull();
        expect(await res.json()).toEqual({ error: { message: "key [redacted:api_key] refused" } });
        expect(asked).toEqual(["identity"]);
      },
    );
  });
});

// The credential proxy puts the provider's key only on the model endpoints the CLIs call (./proxy-paths.ts):
// a provider's files, fine-tuning, batches, admin or billing endpoints, a dot segment or an encoded one that
// would climb out of an allowed path, and a model path by another method are refused with a 403 that says why,
// reported without the key, and never reach the provider. Requests go through node:http, whose paths are sent
// as written (fetch would resolve the dot segments before sending).
import { describe, expect, it } from "vitest";
import { anthropic } from "../../testing/fake-provider/wire-clients.js";
import { nodeRequest } from "../../testing/http.js";
import type { CredentialProxy, ProxyWire } from "./credential-proxy.js";
import { KEY, useProxyBed } from "./testing/proxy-bed.js";

const bed = useProxyBed();

async function proxy(wire: ProxyWire, base_url: string): Promise<{ p: CredentialProxy; refused: string[] }> {
  const refused: string[] = [];
  return { p: await bed.proxy(wire, base_url, (why) => refused.push(why)), refused };
}

/** `path` after the proxy's token, sent byte for byte. */
function send(
  p: CredentialProxy,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return nodeRequest(
    {
      host: "127.0.0.1",
      port: p.port,
      method,
      path: `/${p.token}${path}`,
      headers: { "content-type": "application/json", "x-api-key": p.token },
    },
    {},
    (req) => req.end(body === undefined ? undefined : JSON.stringify(body)),
  );
}

describe("credential proxy paths", () => {
  it("refuses an Anthropic key's non-model endpoints with a 403 naming the path, and reports it without the key", async () => {
    const { p, refused } = await proxy("messages", bed.provider.url);
    for (const [method, path] of [
      ["GET", "/v1/files"],
      ["POST", "/v1/messages/batches"],
      ["GET", "/v1/organizations/api_keys"],
      ["POST", "/v1/complete"],
    ] as const) {
      const res = await send(p, method, `${path}?key=${KEY.slice(0, 3)}`, {});
      expect(res.status).toBe(403);
      expect(JSON.parse(res.text).error.message).toContain(
        `${method} "${path}" is not one of the Anthropic Messages API's model endpoints`,
      );
    }
    expect(refused).toHaveLength(4);
    expect(refused[0]).toContain('GET "/v1/files"');
    expect(refused.join("\n")).not.toContain(KEY);
    expect(refused.join("\n")).not.toContain("?key");
    expect(bed.provider.requests).toEqual([]);
  });

  it("refuses an OpenAI key's files, fine-tuning, batches and admin endpoints, on both OpenAI wires", async () => {
    for (const wire of ["chat", "responses"] as const) {
      const { p, refused } = await proxy(wire, `${bed.provider.url}/v1`);
      for (const [method, path] of [
        ["POST", "/files"],
        ["POST", "/fine_tuning/jobs"],
        ["POST", "/batches"],
        ["GET", "/organization/usage/completions"],
        ["GET", "/responses/resp_123"],
        ["POST", "/embeddings"],
      ] as const) {
        const res = await send(p, method, path, {});
        expect(res.status).toBe(403);
        expect(JSON.parse(res.text).error.message).toContain(
          `"${path}" is not one of the OpenAI API's model endpoints`,
        );
      }
      expect(refused).toHaveLength(6);
    }
    expect(bed.provider.requests).toEqual([]);
  });

  it("refuses a Gemini key's files, tuned models and caches, and a model method it does not list", async () => {
    const { p } = await proxy("gemini", bed.provider.url);
    for (const path of [
      "/v1beta/files",
      "/v1beta/tunedModels",
      "/v1beta/cachedContents",
      "/v1beta/models/gemini-2.5-flash:batchGenerateContent",
      "/upload/v1beta/files",
    ]) {
      expect((await send(p, "POST", path, {})).status).toBe(403);
    }
    expect(bed.provider.requests).toEqual([]);
  });

  it("refuses a path that climbs out of a model endpoint, plain, encoded or doubled", async () => {
    const { p } = await proxy("messages", bed.provider.url);
    for (const path of [
      "/v1/messages/../files",
      "/v1/messages/%2e%2e/files",
      "/v1/messages/%2E%2E%2Ffiles",
      "/v1/models/..%2ffiles",
      "/v1/models/%2e%2e",
      "//v1/messages",
      "/v1//messages",
      "/v1/./messages",
      "/v1/messages/",
      "/V1/MESSAGES",
      "/v1/messages%3Fx",
      "/v1\\messages",
    ]) {
      const res = await send(p, "POST", path, {});
      expect(res.status, path).toBe(403);
    }
    expect(bed.provider.requests).toEqual([]);
  });

  it("refuses a model endpoint by another method, saying which it takes", async () => {
    const { p, refused } = await proxy("messages", bed.provider.url);
    const res = await send(p, "DELETE", "/v1/messages");
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text).error.message).toContain(
      `DELETE "/v1/messages": the credential proxy puts the provider's key on this path only for POST`,
    );
    expect(refused).toHaveLength(1);
    expect(bed.provider.requests).toEqual([]);
  });

  it("forwards what the CLIs call: Claude Code's HEAD of its base URL, messages with a query, token counting, model lists", async () => {
    const { p, refused } = await proxy("messages", bed.provider.url);
    bed.provider.script([{ text: "counted" }]);
    expect((await send(p, "HEAD", "")).status).not.toBe(403);
    expect((await send(p, "HEAD", "/")).status).not.toBe(403);
    const answer = await send(p, "POST", "/v1/messages?beta=true", anthropic.body("hello", false));
    expect(answer).toMatchObject({ status: 200 });
    expect(answer.text).toContain("counted");
    expect((await send(p, "POST", "/v1/messages/count_tokens", anthropic.body("hi", false))).status).not.toBe(
      403,
    );
    const models = await send(p, "GET", "/v1/models");
    expect(models.status).toBe(200);
    expect(models.text).toContain("fake-model");
    expect((await send(p, "GET", "/v1/models/claude-opus-4-8")).status).not.toBe(403);
    expect(refused).toEqual([]);
  });

  it("forwards both OpenAI wires' model requests and lists, and Gemini's generate, stream and count", async () => {
    const openai = await proxy("chat", `${bed.provider.url}/v1`);
    for (const [method, path] of [
      ["POST", "/chat/completions"],
      ["POST", "/responses"],
      ["POST", "/responses/input_tokens"],
      ["POST", "/responses/compact"],
      ["GET", "/models"],
      ["GET", "/models/ft:gpt-4o-mini:org:custom:abc123"],
    ] as const) {
      expect((await send(openai.p, method, path, method === "POST" ? {} : undefined)).status, path).not.toBe(
        403,
      );
    }
    const gemini = await proxy("gemini", bed.provider.url);
    for (const verb of ["generateContent", "streamGenerateContent", "countTokens"]) {
      const path = `/v1beta/models/gemini-2.5-flash:${verb}?alt=sse`;
      expect((await send(gemini.p, "POST", path, {})).status, path).not.toBe(403);
    }
    expect((await send(gemini.p, "GET", "/v1beta/models")).status).not.toBe(403);
    expect([...openai.refused, ...gemini.refused]).toEqual([]);
  });
});

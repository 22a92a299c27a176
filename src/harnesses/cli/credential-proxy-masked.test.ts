// A provider's masked echo of the real key never reaches the agent through the credential proxy: OpenAI's 401
// ("Incorrect API key provided: sk-proj-****…wxyz") and the shorter forms gateways and dashboards write
// ("sk-proj-abc...wxyz", "sk-...wxyz") come out as the key itself does, replaced, also when a stream splits them
// over two chunks; a masked key with other ends (another key's) passes unchanged.
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { CredentialProxy } from "./credential-proxy.js";
import { withUpstream } from "./testing/proxy-bed.js";

/** An OpenAI project key: its vendor prefix, the secret, its last four characters. */
const KEY = "sk-proj-Q3vT9xLmA2bC7dE1fG4hJ6kN8pR0sU5wY_zB-cD3eF9gH2iK4mO6qS8tV1xZ3aB5T0Wq7Z";
/** OpenAI's own form: the key's first 8 characters, a `*` for each hidden one, its last 4. */
const OPENAI_ECHO = `${KEY.slice(0, 8)}${"*".repeat(KEY.length - 12)}${KEY.slice(-4)}`;
const HINT = "You can find your API key at https://platform.openai.com/account/api-keys.";

function openaiError(echo: string): string {
  const message = `Incorrect API key provided: ${echo}. ${HINT}`;
  return JSON.stringify({
    error: { message, type: "invalid_request_error", param: null, code: "invalid_api_key" },
  });
}

/** `run` with a proxy holding KEY on the chat wire, in front of a provider that answers with `answer`. */
async function throughProxy(
  answer: (res: ServerResponse) => void,
  run: (ask: () => Promise<Response>) => Promise<void>,
): Promise<void> {
  await withUpstream(answer, async (url) => {
    const proxy = await CredentialProxy.start({ wire: "chat", api_key: KEY, base_url: url });
    try {
      await run(() =>
        fetch(`${proxy.url}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${proxy.token}` },
          body: JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: "hello" }] }),
        }),
      );
    } finally {
      await proxy.close();
    }
  });
}

describe("credential proxy: the provider's masked echo of the key kept out of answers", () => {
  it("replaces OpenAI's masked echo in a 401 body, and in a header a gateway sets", async () => {
    await throughProxy(
      (res) => {
        res.writeHead(401, { "content-type": "application/json", "x-echo": `Bearer ${OPENAI_ECHO}` });
        res.end(openaiError(OPENAI_ECHO));
      },
      async (ask) => {
        const res = await ask();
        expect(res.status).toBe(401);
        expect(res.headers.get("x-echo")).toBe("Bearer [redacted:api_key]");
        const text = await res.text();
        expect(text).toBe(openaiError("[redacted:api_key]"));
        expect(text).not.toContain(KEY.slice(-4));
      },
    );
  });

  it("replaces the shorter forms: more of the key's start, `...` or `…` as the mask, more of its end", async () => {
    const echoes = [
      `${KEY.slice(0, 11)}...${KEY.slice(-4)}`,
      `sk-...${KEY.slice(-4)}`,
      `${KEY.slice(0, 12)}…${KEY.slice(-6)}`,
      `"${KEY.slice(0, 8)}*****${KEY.slice(-4)}"`,
    ];
    await throughProxy(
      (res) => {
        res.writeHead(401, { "content-type": "text/plain; charset=utf-8" });
        res.end(echoes.map((echo) => `key ${echo} refused`).join("\n"));
      },
      async (ask) => {
        const lines = (await (await ask()).text()).split("\n");
        expect(lines).toEqual([
          "key [redacted:api_key] refused",
          "key [redacted:api_key] refused",
          "key [redacted:api_key] refused",
          'key "[redacted:api_key]" refused',
        ]);
      },
    );
  });

  it("replaces a masked echo a stream splits over two chunks, in its mask or in its last characters", async () => {
    const body = `event: error\ndata: ${openaiError(OPENAI_ECHO)}\n\n`;
    const at = body.indexOf(OPENAI_ECHO);
    for (const cut of [at + 20, at + OPENAI_ECHO.length - 2]) {
      let rest: (() => void) | undefined;
      await throughProxy(
        (res) => {
          res.writeHead(401, { "content-type": "text/event-stream" });
          res.write(body.slice(0, cut));
          rest = () => res.end(body.slice(cut));
        },
        async (ask) => {
          const res = await ask();
          const reader = res.body!.getReader();
          let text = "";
          // What comes before the echo is sent as it comes; the echo's start is held until its end arrives.
          while (!text.includes("provided: ")) {
            const { value } = await reader.read();
            text += new TextDecoder().decode(value);
          }
          expect(text).not.toContain(KEY.slice(0, 3));
          rest?.();
          for (let read = await reader.read(); !read.done; read = await reader.read()) {
            text += new TextDecoder().decode(read.value);
          }
          expect(text).toBe(`event: error\ndata: ${openaiError("[redacted:api_key]")}\n\n`);
        },
      );
    }
  });

  it("leaves a masked key with other ends as it is: the same prefix and other last 4, another vendor's key", async () => {
    const other = [
      openaiError(`${KEY.slice(0, 8)}${"*".repeat(KEY.length - 12)}Ab12`),
      `sk-...Ab12 and ${KEY.slice(0, 11)}...9xYz`,
      `sk-ant-api03-...${KEY.slice(-4)} and AIzaSy...${KEY.slice(-4)}`,
      `${KEY.slice(0, 8)} then ${KEY.slice(-4)}: no mask between them`,
    ].join("\n");
    await throughProxy(
      (res) => {
        res.writeHead(401, { "content-type": "text/plain" });
        res.end(other);
      },
      async (ask) => {
        expect(await (await ask()).text()).toBe(other);
      },
    );
  });
});

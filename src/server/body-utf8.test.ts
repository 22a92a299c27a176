// A request body is JSON text, which is UTF-8 (RFC 8259). Bytes that are not UTF-8 are refused with a 400 that says
// so, instead of being read as U+FFFD and taken: a prompt would otherwise be logged as words the client never sent.
// (Found by src/server/bad-input.test.ts.)
import { describe, expect, it } from "vitest";
import { collect, newSession, raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

async function post(path: string, body: Uint8Array) {
  const res = await fetch(`${t.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.tokens.admin}`, "content-type": "application/json" },
    body,
  });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

describe("a body that is not UTF-8", () => {
  it("is refused, and the prompt in it is not logged", async () => {
    const id = await newSession(t);
    const bytes = Buffer.concat([Buffer.from('{"text":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const res = await post(`/v1/sessions/${id}/prompt`, bytes);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "bad_request" });
    expect(res.body.error?.message).toContain("UTF-8");
    const log = await raw(t.url, "GET", `/v1/sessions/${id}/log`, { token: t.tokens.admin });
    expect((log.body.events as { type: string }[]).map((e) => e.type)).not.toContain("user.prompt");
  });

  it("refuses an encoded surrogate (CESU-8) too, and takes text in every plane", async () => {
    const id = await newSession(t);
    const cesu = Buffer.concat([
      Buffer.from('{"text":"'),
      Buffer.from([0xed, 0xa0, 0xbd]),
      Buffer.from('"}'),
    ]);
    expect((await post(`/v1/sessions/${id}/prompt`, cesu)).status).toBe(400);
    const text = "héllo 世界 🧠";
    const ok = await post(`/v1/sessions/${id}/prompt`, Buffer.from(JSON.stringify({ text })));
    expect(ok.status).toBe(202);
    const seen = await collect(t.client(), id, (e) => e.type === "user.prompt");
    expect(seen.at(-1)?.data).toMatchObject({ text });
  });
});

// A session's config goes to its runner in one `open` frame (at most 4 MiB): a config no frame carries is refused
// at create (413 naming the field and the limit), and a handoff's model too, before anything is stored; such a
// session used to be stored whole, held by every listing, and failed each of its turns with a framing error.
import { describe, expect, it } from "vitest";
import { MAX_PROMPT_BYTES } from "../protocol/runner.js";
import { newSession, raw } from "../testing/http.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

describe("a session's config", () => {
  it("too large for a runner's open frame gets 413 naming the field and the limit, and stores nothing", async () => {
    const token = t.tokens.other;
    const made = await raw(t.url, "POST", "/v1/sessions", {
      token,
      body: { harness: "echo", config: { system_prompt: "s".repeat(5 << 20) } },
    });
    expect(made.status).toBe(413);
    expect(made.body.error).toMatchObject({ code: "payload_too_large", field: "config" });
    expect(String((made.body.error as { message: string }).message)).toContain(String(MAX_PROMPT_BYTES));
    expect((await raw(t.url, "GET", "/v1/sessions", { token })).body.sessions).toEqual([]);

    const id = await newSession(t, { harness: "echo" }, token);
    const handoff = await raw(t.url, "POST", `/v1/sessions/${id}/handoff`, {
      token,
      body: { to: "echo", model: "m".repeat(5 << 20) },
    });
    expect(handoff.status).toBe(413);
    expect(handoff.body.error).toMatchObject({ code: "payload_too_large", field: "model" });
    const fits = await raw(t.url, "POST", "/v1/sessions", {
      token,
      body: { harness: "echo", config: { system_prompt: "s".repeat(1 << 20) } },
    });
    expect(fits.status).toBe(201);
  });
});

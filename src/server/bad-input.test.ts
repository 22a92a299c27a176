// Every route of /openapi.json, attacked with malformed input by a client holding a valid token (the cases are in
// src/testing/bad-input.ts): each gets a 4xx in the API's error shape that names what was wrong — never a 5xx, a
// hang or a dropped connection — the daemon serves a normal request afterwards, and another tenant's session is
// byte-for-byte what it was. BRAIN_BAD_INPUT_SEED replays another draw; a failure names its seed and input.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiErrorBody } from "../protocol/api.js";
import { BadInput, type BadRequest, operations } from "../testing/bad-input.js";
import { collect, newSession, nodeRequest, raw, settled } from "../testing/http.js";
import { rng } from "../testing/rng.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const SEED = Number(process.env.BRAIN_BAD_INPUT_SEED ?? 22);
/** Drawn cases per operation, besides the bulky ones (bodies over the limit, huge arrays). */
const PER_OPERATION = 12;

const t = useTestDaemon();

/**
 * Every file under the session's directory, by its path there: what must not change. Not the log's `.state`, a
 * cache of where its tail is, which the store writes when it likes.
 */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith(".state")) continue;
    const file = join(entry.parentPath, entry.name);
    out[file.slice(dir.length)] = readFileSync(file).toString("base64");
  }
  return out;
}

/** What is wrong with the daemon's answer to `req`, or undefined when it is right. */
async function send(req: BadRequest, token: string): Promise<string | undefined> {
  let res: Response;
  try {
    res = await fetch(`${t.url}${req.path}`, {
      method: req.method,
      headers: {
        ...(req.path.startsWith("/nui/") ? {} : { authorization: `Bearer ${token}` }),
        ...req.headers,
      },
      ...(req.body !== undefined ? { body: req.body } : {}),
      // A bound, not a measure: a daemon that never answers fails the case instead of the whole run.
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    return `no answer: ${(err as Error).message} (${String((err as { cause?: unknown }).cause ?? "")})`;
  }
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    await res.body?.cancel();
    return req.names ? `a ${res.status} event stream` : undefined;
  }
  const text = await res.text();
  if (res.status >= 500) return `${res.status}: ${text.slice(0, 300)}`;
  if (!req.names) return undefined;
  if (res.status < 400) return `${res.status}, not a 4xx: ${text.slice(0, 300)}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${res.status} with a body that is not JSON: ${text.slice(0, 300)}`;
  }
  const shaped = ApiErrorBody.safeParse(body);
  if (!shaped.success) return `${res.status} with a body not in the error shape: ${text.slice(0, 300)}`;
  const { field, message } = shaped.data.error;
  const said = `${field ?? ""} ${message}`.toLowerCase();
  if (!req.names.some((name) => said.includes(name.toLowerCase())))
    return `${res.status} names none of ${req.names.join(", ")}: ${text.slice(0, 300)}`;
  return undefined;
}

describe(`malformed input on every route (seed ${SEED})`, () => {
  let own: string;
  let foreign: string;
  beforeAll(async () => {
    own = await newSession(t);
    foreign = await newSession(t, { harness: "echo" }, t.tokens.other);
    const other = t.client({ token: t.tokens.other });
    const turn = await other.prompt(foreign, "the other tenant's words");
    await collect(other, foreign, settled(turn.turn));
  });

  it("answers each with a 4xx that names what was wrong, and changes no other tenant's session", async () => {
    const before = snapshot(join(t.home, "sessions", foreign));
    const document = (await raw(t.url, "GET", "/openapi.json")).body as Parameters<typeof operations>[0];
    const r = rng(SEED);
    const bad = new BadInput(r, { own, foreign }, t.tokens.admin);
    const cases = operations(document)
      .filter((op) => op.path !== "/healthz" && op.path !== "/openapi.json")
      .flatMap((op) => [...bad.cases(op, PER_OPERATION), ...bad.bulky(op)]);
    const failures: string[] = [];
    for (const req of cases) {
      const wrong = await send(req, t.tokens.admin);
      if (wrong) failures.push(`${req.method} ${req.path.slice(0, 120)} with ${req.what}: ${wrong}`);
    }
    console.info(`bad-input: ${cases.length} requests, seed ${SEED}`);
    expect(failures, `seed ${SEED} (BRAIN_BAD_INPUT_SEED), ${cases.length} requests`).toEqual([]);
    // Still serving, and the other tenant's session is as it was.
    const after = await raw(t.url, "GET", `/v1/sessions/${foreign}`, { token: t.tokens.other });
    expect(after.status).toBe(200);
    expect(snapshot(join(t.home, "sessions", foreign))).toEqual(before);
  }, 600_000);

  it("refuses a GET's body that says something, naming the route; one that says nothing is taken", async () => {
    // fetch sends no body with a GET: node:http does, as other clients may.
    const get = (path: string, body: string) =>
      nodeRequest(
        `${t.url}${path}`,
        {
          method: "GET",
          headers: {
            authorization: `Bearer ${t.tokens.admin}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (req) => req.end(body),
      );
    const refused = await get(`/v1/sessions/${own}/log?after=0&limit=5`, '{"limit": 1000}');
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text).error).toMatchObject({
      code: "bad_request",
      field: "body",
      message: expect.stringContaining("GET /v1/sessions/{id}/log takes no body"),
    });
    expect((await get(`/v1/sessions/${own}`, "{}")).status).toBe(200);
  });
});

// A secret's encoded forms (secret-forms.ts) kept out by the Redactor and the log boundary: base64'd (a tool's
// `echo -n $KEY | base64`, a Basic credential), percent-encoded (a curl -v line with the key in its query string) and
// with its `/` escaped (PHP's JSON), whole and split over two deltas. None for a value too short to be a secret, and
// none matching text that does not hold the secret.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { givesAway, stringsIn } from "../testing/gives-away.js";
import { memoryLog } from "../testing/memory-log.js";
import { Redactor } from "./redact.js";
import { redactingLog } from "./redacting-log.js";
import { encodedForms, MIN_SECRET_LENGTH } from "./secret-forms.js";

/** A gateway key: `+`, `/` and `=` are percent-encoded in a URL, and `~` in a form. */
const KEY = "gw-Zk9/+q2=Xy7Lm0Pq/4sT8vW~";
const base64 = (text: string) => Buffer.from(text).toString("base64");

/** The key as tools and requests print it: each line must come out holding none of it. */
const PRINTED = [
  `$ echo -n $KEY | base64\n${base64(KEY)}`,
  `> authorization: Basic ${base64(`user:${KEY}`)}`,
  `> authorization: Basic ${base64(`me:${KEY}`)}`,
  `echoed ${Buffer.from(JSON.stringify({ key: KEY })).toString("base64url")}`,
  `> GET /v1/models?key=${encodeURIComponent(KEY)} HTTP/1.1`,
  `lower ${encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())}`,
  `form ${new URLSearchParams({ key: KEY })}`,
  `php {"key":"${KEY.replaceAll("/", "\\/")}"}`,
];

describe("the Redactor and a secret's encoded forms", () => {
  it("replaces a secret base64'd at any offset, percent-encoded in either case, or with its slashes escaped", () => {
    const redactor = new Redactor([{ name: "GW_KEY", value: KEY }]);
    for (const line of PRINTED) {
      expect(givesAway(line, KEY), line).toBe(true);
      const out = redactor.redact(line);
      expect(out, line).toContain("[redacted:GW_KEY]");
      expect(givesAway(out, KEY), out).toBe(false);
    }
  });

  it("leaves a value too short to be a secret alone in every form, and text that holds no secret unchanged", () => {
    const short = KEY.slice(0, MIN_SECRET_LENGTH - 1);
    expect(encodedForms(short)).toEqual([]);
    const redactor = new Redactor([
      { name: "SHORT", value: short },
      { name: "GW_KEY", value: KEY },
    ]);
    for (const text of [base64(short), encodeURIComponent(short), `Basic ${base64(`u:${short}`)}`]) {
      expect(redactor.redact(text)).toBe(text);
    }
    // Base64, base64url and percent-encodings of other random bytes, and prose: the forms are as long and as
    // random as the key, so none matches here.
    for (let i = 0; i < 200; i++) {
      const bytes = randomBytes(64);
      const text = `${bytes.toString("base64")} ${bytes.toString("base64url")} ${encodeURIComponent(bytes.toString("latin1"))} the key is gw-Zk9 and /v1/models?key=`;
      expect(redactor.redact(text)).toBe(text);
    }
  });
});

describe("a Redactor made with() another's secrets and more", () => {
  it("redacts both's forms, and the one it was made from learns nothing of the more", () => {
    const other = "tok_0123456789abcdefXYZ/";
    const host = new Redactor([{ name: "GW_KEY", value: KEY }]);
    const record = host.with([{ name: "TOKEN", value: other }]);
    const text = `${base64(KEY)} ${base64(other)} ${encodeURIComponent(other)}`;
    expect(record.redact(text)).toBe("[redacted:GW_KEY] [redacted:TOKEN] [redacted:TOKEN]");
    expect(host.redact(text)).toBe(`[redacted:GW_KEY] ${base64(other)} ${encodeURIComponent(other)}`);
    expect(host.values.map((secret) => secret.name)).toEqual(["GW_KEY"]);
    // And one that learns a secret later (add) redacts its forms from then on.
    host.add([{ name: "TOKEN", value: other }]);
    expect(host.redact(text)).toBe("[redacted:GW_KEY] [redacted:TOKEN] [redacted:TOKEN]");
  });
});

describe("the log boundary and a secret's encoded forms", () => {
  it("keeps each form out when a delta stream splits it anywhere", async () => {
    const redactor = new Redactor([{ name: "GW_KEY", value: KEY }]);
    for (const line of PRINTED) {
      const text = `said: ${line} ok`;
      for (let cut = 7; cut < text.length - 3; cut++) {
        const inner = memoryLog();
        const log = redactingLog(inner, redactor);
        await log.append([{ type: "assistant.delta", turn: "t", data: { text: text.slice(0, cut) } }]);
        await log.append([{ type: "assistant.delta", turn: "t", data: { text: text.slice(cut) } }]);
        await log.close();
        const deltas = inner.stored.map((e) => (e.data as { text: string }).text);
        const written = deltas.join("");
        expect(written, `${line} cut at ${cut}`).toContain("[redacted:GW_KEY]");
        expect(givesAway(written, KEY), `${line} cut at ${cut}: ${written}`).toBe(false);
        for (const delta of deltas) expect(givesAway(delta, KEY), delta).toBe(false);
      }
    }
  });

  it("keeps each form out of a tool result and of an error's message", async () => {
    const inner = memoryLog();
    const log = redactingLog(inner, new Redactor([{ name: "GW_KEY", value: KEY }]));
    await log.append([
      {
        type: "tool.result",
        turn: "t",
        data: { id: "c1", content: [{ type: "text", text: PRINTED.join("\n") }], is_error: false },
      },
      {
        type: "turn.settled",
        turn: "t",
        data: { status: "failed", error: { code: "provider_error", message: PRINTED.join("; ") } },
      },
    ]);
    const texts = stringsIn(inner.stored);
    expect(texts.filter((text) => text.includes("[redacted:GW_KEY]"))).toHaveLength(2);
    for (const text of texts) expect(givesAway(text, KEY), text).toBe(false);
  });
});

// Malformed requests for every route of the daemon's OpenAPI document (src/server/bad-input.test.ts): bodies of the
// wrong JSON types, missing and unknown fields, huge and deep values, invalid UTF-8 and NUL bytes, wrong content
// types, path params a caller may not use, sloppy cursors and bad headers. Drawn from a seed, so a failure replays.
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Rng } from "./rng.js";

export interface BadRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** What was made bad, for the failure message. */
  what: string;
  /**
   * Words of which the error (its field or message) must hold one: what was wrong. Undefined for input a route
   * may take (a NUL inside a string the schema allows): then only "not a 5xx, not a hang" is asserted.
   */
  names?: string[];
}

/** The ids the cases use: a session of the caller's, and one of another tenant's. */
export interface Targets {
  own: string;
  foreign: string;
}

/** A valid body per operation ("POST /v1/sessions/{id}/prompt"): the malformed ones are made from it. */
export const VALID_BODIES: Record<string, Record<string, unknown>> = {
  "POST /v1/sessions": { harness: "echo" },
  "POST /v1/sessions/{id}/prompt": { text: "hello" },
  "POST /v1/sessions/{id}/steer": { text: "more" },
  "POST /v1/sessions/{id}/requests/{requestId}": { decision: "allow" },
  "POST /v1/sessions/{id}/fork": {},
  "POST /v1/sessions/{id}/handoff": { to: "echo" },
  "POST /v1/sessions/{id}/rebuild": {},
  "POST /v1/sessions/{id}/restore": { into: "/nonexistent-brain-restore" },
  "POST /v1/sessions/{id}/control": { client: "fuzz-client" },
  "POST /api/hitl/requests": { kind: "approval", sessionId: "{id}", payload: { message: "ok?" } },
  "POST /api/hitl/requests/{requestId}/respond": { status: "answered", answers: { approved: true } },
};

interface Operation {
  method: string;
  path: string;
  parameters: { name: string; in: string }[];
  schema?: Record<string, unknown>;
}

/** Every operation of the document (the /nui/{token} copies of the HITL routes share their base's body). */
export function operations(document: { paths: Record<string, Record<string, unknown>> }): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const o = op as {
        parameters?: Operation["parameters"];
        requestBody?: { content: Record<string, unknown> };
      };
      const schema = (o.requestBody?.content["application/json"] as { schema?: Record<string, unknown> })
        ?.schema;
      out.push({
        method: method.toUpperCase(),
        path,
        parameters: o.parameters ?? [],
        ...(schema ? { schema } : {}),
      });
    }
  }
  return out;
}

/** The operation's valid body, "{id}" in it the caller's session. */
export function validBody(op: Operation, own: string): Record<string, unknown> | undefined {
  if (!op.schema) return undefined;
  const body = VALID_BODIES[`${op.method} ${op.path.replace(/^\/nui\/\{token\}/, "")}`];
  if (!body) throw new Error(`bad-input: no valid body for ${op.method} ${op.path}: add one to VALID_BODIES`);
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, v === "{id}" ? own : v]));
}

const JSON_HEADERS = { "content-type": "application/json" };
const WRONG_VALUES: unknown[] = [0, -1, 1.5, true, null, "", "x", [], [1], {}, { a: 1 }];
const BAD_IDS = [
  "..",
  "%2E%2E",
  "..%2F..%2Fetc",
  "%00",
  "%FF%FE",
  "セッション",
  "a".repeat(3000),
  "%2F",
  " ",
  "null",
];
// An empty value is the parameter left out (as ?after= is taken), so none is here.
const BAD_NUMBERS = ["-1", "NaN", "1e400", "99999999999999999999999", "1.5", "0x10", "abc", "Infinity", "٣"];

export class BadInput {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false });

  constructor(
    private readonly r: Rng,
    private readonly targets: Targets,
    private readonly token: string,
  ) {}

  private valid(op: Operation) {
    return validBody(op, this.targets.own);
  }

  /** `count` malformed requests for the operation. */
  cases(op: Operation, count: number): BadRequest[] {
    const makers = [
      () => this.pathParam(op),
      () => this.query(op),
      () => this.header(op),
      () => this.brainHeader(op),
      () => this.wrongMethod(op),
      () => this.lookup(op),
      ...(op.schema
        ? [
            () => this.wrongType(op),
            () => this.missing(op),
            () => this.unknownField(op),
            () => this.notJson(op),
            () => this.contentType(op),
            () => this.deep(op),
            () => this.nulInString(op),
          ]
        : [() => this.bodyOnNone(op)]),
    ];
    const out: BadRequest[] = [];
    for (let tries = 0; out.length < count && tries < count * 20; tries++) {
      const made = this.r.pick(makers)();
      if (made) out.push(made);
    }
    return out;
  }

  /** The few that cost bytes: bodies over the 8 MiB limit, huge arrays (once per body route). */
  bulky(op: Operation): BadRequest[] {
    if (!op.schema) return [];
    const huge = "x".repeat(9 << 20);
    const field = this.r.pick(Object.keys(propsOf(op.schema)).concat("text"));
    const over = this.request(op, { body: JSON.stringify({ ...this.valid(op), [field]: huge }) });
    const array = this.request(op, {
      body: JSON.stringify({ ...this.valid(op), [field]: new Array(200_000).fill(7) }),
    });
    return [
      { ...over, what: `a 9 MiB string in "${field}"`, names: ["8 MiB"] },
      ...(this.rejects(op, { ...this.valid(op), [field]: [7] })
        ? [{ ...array, what: `200,000 numbers in "${field}"`, names: [field] }]
        : []),
    ];
  }

  private request(
    op: Operation,
    over: {
      params?: Record<string, string>;
      query?: string;
      headers?: Record<string, string>;
      body?: string | Uint8Array;
    },
  ): BadRequest {
    const params: Record<string, string> = {
      id: this.targets.own,
      requestId: "no-such-request",
      token: this.token,
      ...over.params,
    };
    const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => params[name] ?? "x");
    const body = over.body ?? (op.schema ? JSON.stringify(this.valid(op)) : undefined);
    return {
      method: op.method,
      path: `${path}${over.query ?? ""}`,
      headers: { ...(body !== undefined ? JSON_HEADERS : {}), ...over.headers },
      ...(body !== undefined ? { body } : {}),
      what: "",
    };
  }

  private rejects(op: Operation, body: unknown): boolean {
    return !this.ajv.validate(op.schema!, body);
  }

  private pathParam(op: Operation): BadRequest | undefined {
    const names = op.parameters.filter((p) => p.in === "path").map((p) => p.name);
    if (names.length === 0) return undefined;
    const name = this.r.pick(names);
    // Another tenant's session: for them it exists, for this caller it must not.
    const value = name === "id" && this.r.int(3) === 0 ? this.targets.foreign : this.r.pick(BAD_IDS);
    const req = this.request(op, { params: { [name]: value } });
    const shown = value.length > 40 ? `${value.slice(0, 10)}…(${value.length})` : value;
    // A route's own 404 names what it looked for; Hono's, a path no route has.
    return {
      ...req,
      what: `path {${name}} = ${shown}`,
      names: [name, "session", "request", "route", "token"],
    };
  }

  private query(op: Operation): BadRequest | undefined {
    const strict = op.parameters.filter(
      (p) => p.in === "query" && ["after", "limit", "order", "role"].includes(p.name),
    );
    if (strict.length === 0) return undefined;
    const name = this.r.pick(strict).name;
    const value = this.r.pick(name === "after" || name === "limit" ? BAD_NUMBERS : ["x", "NEWEST", "观察"]);
    const req = this.request(op, { query: `?${name}=${encodeURIComponent(value)}` });
    return { ...req, what: `query ${name}=${JSON.stringify(value)}`, names: [name] };
  }

  private header(op: Operation): BadRequest | undefined {
    const declared = op.parameters.filter((p) => p.in === "header").map((p) => p.name);
    if (declared.length === 0) return undefined;
    const name = this.r.pick(declared);
    const value =
      name === "Last-Event-ID"
        ? this.r.pick(["-1", "abc", "1e400", "1.5", "99999999999999999999999", "0x1f"])
        : // What fetch can send: header values are Latin-1, their outer spaces trimmed.
          this.r.pick(["k".repeat(201), "caf\u00e9", "a b", "key\u00ff"]);
    const req = this.request(op, { headers: { [name]: value } });
    return { ...req, what: `header ${name}: ${JSON.stringify(value.slice(0, 40))}`, names: [name] };
  }

  /** X-Brain-Client and X-Brain-Role, which every route reads (src/server/auth/caller.ts). */
  private brainHeader(op: Operation): BadRequest {
    const [name, names, value] = this.r.pick([
      ["X-Brain-Client", ["client"], this.r.pick(["a b", "c".repeat(300), "caf\u00e9", "x/y"])],
      ["X-Brain-Role", ["role"], this.r.pick(["admin", "Observer", "r".repeat(5000)])],
    ] as const);
    const req = this.request(op, { headers: { [name]: value } });
    return { ...req, what: `header ${name}: ${JSON.stringify(value.slice(0, 40))}`, names: [...names] };
  }

  /** Options sent to a route that takes no body: refused, not ignored as if applied (a GET's fetch cannot send one). */
  private bodyOnNone(op: Operation): BadRequest | undefined {
    if (op.method === "GET") return undefined;
    const body = JSON.stringify(this.r.pick([{ force: true }, { reason: "done" }, [], "now"]));
    return {
      ...this.request(op, { body }),
      what: `body ${body} on a route that takes none`,
      names: ["takes no body"],
    };
  }

  /** A method the path does not serve (a 405 naming it), or a path past the longest a request line may be. */
  private wrongMethod(op: Operation): BadRequest {
    if (this.r.int(4) === 0) {
      const req = this.request(op, { query: `?pad=${"p".repeat(20_000)}` });
      return { ...req, what: "a 20,000-character query", names: ["header", "16 KiB"] };
    }
    const method = this.r.pick(["PUT", "PATCH"]);
    return {
      ...this.request(op, {}),
      method,
      what: `method ${method}`,
      names: [`method ${method} is not allowed`],
    };
  }

  /**
   * Query parameters that name a session or a request (the HITL routes' sessionId): another tenant's, or none's.
   * The route may answer anything but a 5xx; that the other tenant's session stays as it was is the test's check.
   */
  private lookup(op: Operation): BadRequest | undefined {
    const names = op.parameters.filter((p) => p.in === "query" && /Id$/.test(p.name)).map((p) => p.name);
    if (names.length === 0) return undefined;
    const name = this.r.pick(names);
    const value = this.r.pick([this.targets.foreign, "..", "%00", "s".repeat(3000), "セッション"]);
    const req = this.request(op, { query: `?${name}=${encodeURIComponent(value)}&${name}=x` });
    return { ...req, what: `query ${name}=${value.slice(0, 40)}` };
  }

  /** A value of the wrong type at a field, or at a field of an object field (config.model). */
  private wrongType(op: Operation): BadRequest | undefined {
    const paths = fieldPaths(op.schema!);
    if (paths.length === 0) return undefined;
    const path = this.r.pick(paths);
    const value = this.r.pick(WRONG_VALUES);
    const body: Record<string, unknown> = structuredClone(this.valid(op)!);
    let at = body;
    for (const key of path.slice(0, -1)) {
      if (typeof at[key] !== "object" || at[key] === null) at[key] = {};
      at = at[key] as Record<string, unknown>;
    }
    at[path.at(-1)!] = value;
    if (!this.rejects(op, body)) return undefined;
    const field = path.join(".");
    const req = this.request(op, { body: JSON.stringify(body) });
    // An object field made up to hold it may lack its required fields: those are what is wrong then.
    return { ...req, what: `"${field}": ${JSON.stringify(value)}`, names: [field, path[0]!] };
  }

  private missing(op: Operation): BadRequest | undefined {
    const required = (op.schema!.required as string[] | undefined) ?? [];
    if (required.length === 0) return this.wrongRoot(op);
    const key = this.r.pick(required);
    const { [key]: _, ...body } = this.valid(op)!;
    const req = this.request(op, { body: JSON.stringify(body) });
    return { ...req, what: `without "${key}"`, names: [key] };
  }

  /** The body as a JSON value that is not an object. */
  private wrongRoot(op: Operation): BadRequest {
    const value = this.r.pick(["[]", "7", '"text"', "null", "true"]);
    return { ...this.request(op, { body: value }), what: `body ${value}`, names: ["body"] };
  }

  private unknownField(op: Operation): BadRequest | undefined {
    const key = this.r.pick(["extra", "__proto__", "constructor", "Text", "session"]);
    const body = `${JSON.stringify(this.valid(op)).slice(0, -1)}${Object.keys(this.valid(op)!).length ? "," : ""}"${key}":1}`;
    if (!this.rejects(op, JSON.parse(body))) return undefined;
    return { ...this.request(op, { body }), what: `unknown field "${key}"`, names: [key] };
  }

  private notJson(op: Operation): BadRequest {
    const valid = JSON.stringify(this.valid(op));
    const text = Buffer.from(valid.length > 2 ? `${valid.slice(0, -1)},"z":"` : '{"z":"');
    const variants: [string, Uint8Array][] = [
      ["invalid UTF-8", Buffer.concat([text, Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')])],
      ["a lone surrogate's bytes", Buffer.concat([text, Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])],
      ["a raw NUL byte in a string", Buffer.concat([text, Buffer.from([0]), Buffer.from('"}')])],
      ["truncated JSON", Buffer.from(valid.slice(0, -1))],
      ["a trailing comma", Buffer.from(`${valid.slice(0, -1)},}`)],
    ];
    const [what, body] = this.r.pick(variants);
    return { ...this.request(op, { body }), what, names: ["JSON", "UTF-8"] };
  }

  private contentType(op: Operation): BadRequest {
    const type = this.r.pick([
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
      "application/jsonx",
    ]);
    const req = this.request(op, { headers: { "content-type": type } });
    return { ...req, what: `Content-Type: ${type}`, names: ["Content-Type"] };
  }

  private deep(op: Operation): BadRequest {
    const key = this.r.pick(Object.keys(propsOf(op.schema!)).concat("deep"));
    const depth = 65 + this.r.int(5000);
    const body = JSON.stringify({ ...this.valid(op), [key]: "@deep" }).replace(
      '"@deep"',
      `${"[".repeat(depth)}${"]".repeat(depth)}`,
    );
    return { ...this.request(op, { body }), what: `"${key}" nested ${depth} deep`, names: [key] };
  }

  /** An escaped NUL (valid JSON) in a string the body holds: the route may take it, but never answer 5xx. */
  private nulInString(op: Operation): BadRequest | undefined {
    const strings = Object.entries(this.valid(op)!).filter(([, v]) => typeof v === "string");
    if (strings.length === 0) return undefined;
    const [key, value] = this.r.pick(strings);
    const body = JSON.stringify({
      ...this.valid(op),
      [key]: `${value}\u0000${this.r.pick(["", "..", "/x"])}`,
    });
    return { ...this.request(op, { body }), what: `a NUL in "${key}"` };
  }
}

/** The schema's fields, and those of its object fields: ["harness"], ["config", "model"], ... */
function fieldPaths(schema: Record<string, unknown>): string[][] {
  return Object.entries(propsOf(schema)).flatMap(([key, sub]) => [
    [key],
    ...Object.keys(propsOf(sub as Record<string, unknown>)).map((inner) => [key, inner]),
  ]);
}

function propsOf(schema: Record<string, unknown>): Record<string, unknown> {
  return (schema.properties as Record<string, unknown> | undefined) ?? {};
}

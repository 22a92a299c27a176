// A client of the daemon's HTTP API: what `brain attach`, `brain run --server`, `brain acp --server`, the
// tests and the benchmarks use. Every call goes through the endpoint table (src/protocol/endpoints.ts), so its
// path, body and answer types are the daemon's own. Errors carry the daemon's status, code and message.

import { setTimeout as sleep } from "node:timers/promises";
import { neverSent } from "../core/fetch-failure.js";
import type { AnswerBody, CreateSessionBody, PromptBody, SessionView } from "../protocol/api.js";
import {
  ENDPOINTS,
  type EndpointBody,
  type EndpointName,
  type EndpointResponse,
  type Endpoints,
  endpointPath,
  type PathParams,
} from "../protocol/endpoints.js";
import type { SessionEvent } from "../protocol/events.js";
import { ClientError, errorOf, fetchAnswered, unansweredMessage } from "./errors.js";
import { type EventStreamOptions, streamEvents } from "./events.js";

export { ClientError };

export interface ClientOptions {
  /** The daemon's base URL, e.g. http://127.0.0.1:7777. */
  url: string;
  token?: string;
  /** Sent as X-Brain-Client: the id the controller lease is held by. */
  client?: string;
  /** "observer" watches without ever taking control. */
  role?: "observer" | "controller";
  /**
   * Asked before each request and each (re)connect of an event stream: why the token must not go to `url` now, or
   * undefined. The listener at an address can change while a client lives (a daemon restarted, its port taken).
   */
  guard?: () => string | undefined;
  /**
   * Where the token came from when no one gave it (the CLI's tokens.json): a daemon that does not know it is not
   * that home's daemon, which its refusal is to say (its own advice, `brain token`, prints the same token again).
   */
  tokenFile?: string;
  /** How long to wait for an answer's headers (ms): a daemon that sends none is an error after it. Default: Node's 300 s. */
  answerTimeoutMs?: number;
  /**
   * How long a request that is safe to ask again (a GET, a keyed command) waits for a daemon that died holding it
   * to listen again (ms). Default 15 s: a restart (a supervisor's, `brain serve` run again) takes seconds.
   */
  restartWaitMs?: number;
}

/** A command's Idempotency-Key: a retry with the same key runs the command once and gets the first answer. */
export interface CommandOptions {
  key?: string;
}

// An empty key is sent, to be refused: dropping it would make the caller's retry a second command.
const keyHeader = (options: CommandOptions): Record<string, string> =>
  options.key !== undefined ? { "idempotency-key": options.key } : {};

/**
 * Why `token` cannot go in an Authorization header, or undefined when it can: a line break, a control character or
 * one past U+00FF, which fetch refuses. Said without the token: fetch's own error quotes the whole header, so two
 * tokens pasted on two lines were printed, as "cannot reach the daemon".
 */
export function tokenProblem(token: string): string | undefined {
  // Spaces and line breaks around it are fine: fetch takes them off a header's value (a file's last newline).
  const lead = /^[\t\n\r ]*/.exec(token)![0].length;
  const at = token
    .slice(lead)
    .replace(/[\t\n\r ]+$/, "")
    .search(/[^\t\x20-\x7e\x80-\xff]/);
  if (at < 0) return undefined;
  const code = token.codePointAt(lead + at)!;
  const what =
    code === 0x0a || code === 0x0d ? "a line break" : code > 0xff ? "past U+00FF" : "a control character";
  return `its character ${lead + at + 1} (U+${code.toString(16).toUpperCase().padStart(4, "0")}) is ${what}, which an HTTP header cannot carry: give the token alone, as \`brain token\` prints it`;
}

/**
 * The fields of each answer the client's callers read, and their kinds: a loose check (a newer daemon's added
 * fields pass) so that another server's JSON fails here, named, not later as "no value for {id}" or "undefined".
 */
const VIEW = { id: "string", harness: "string", status: "string" } as const;
const USED_FIELDS: Partial<Record<EndpointName, Record<string, "string" | "array">>> = {
  create: VIEW,
  session: VIEW,
  fork: VIEW,
  handoff: VIEW,
  sessions: { sessions: "array" },
  prompt: { turn: "string" },
  log: { events: "array" },
};

function missingField(answer: unknown, fields: Record<string, "string" | "array">): string | undefined {
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return "an object";
  for (const [field, kind] of Object.entries(fields)) {
    const value = (answer as Record<string, unknown>)[field];
    if (kind === "array" ? !Array.isArray(value) : typeof value !== kind)
      return `${kind === "array" ? "an array" : "a string"} "${field}"`;
  }
  return undefined;
}

/** fetch failed after it connected: the daemon took the request and the connection broke before an answer. */
function brokeAfterSent(err: unknown): boolean {
  return (err as { cause?: unknown } | undefined)?.cause !== undefined && !neverSent(err);
}

/**
 * What a request that got no answer says. Nothing there: start the daemon. A connection that broke under a
 * command: the daemon went away while it had it, and may have carried it out first ("cannot reach" said neither).
 */
function unreachable(url: string, what: string, err: unknown): ClientError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  const where = "give the daemon's address with --server or $BRAIN_URL";
  if (!brokeAfterSent(err) || what.startsWith("GET "))
    return new ClientError(
      0,
      "unreachable",
      `cannot reach the daemon at ${url} (${why}): is \`brain serve\` running? Start it, or ${where}`,
    );
  return new ClientError(
    0,
    "unreachable",
    `the daemon at ${url} closed the connection before it answered ${what} (${why}): it stopped or restarted while it had the request, and may have carried it out; look (\`brain attach SESSION\`) before you repeat it. If \`brain serve\` is not running, start it, or ${where}`,
  );
}

export class BrainClient {
  readonly url: string;

  constructor(readonly options: ClientOptions) {
    this.url = options.url.replace(/\/+$/, "");
    const problem = options.token === undefined ? undefined : tokenProblem(options.token);
    if (problem) throw new ClientError(0, "bad_token", `the token cannot be sent: ${problem}`);
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const refused = this.options.guard?.();
    if (refused) throw new ClientError(0, "refused", refused);
    return {
      ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
      ...(this.options.client ? { "x-brain-client": this.options.client } : {}),
      ...(this.options.role ? { "x-brain-role": this.options.role } : {}),
      ...extra,
    };
  }

  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<T> {
    const sent = { ...(body === undefined ? {} : { "content-type": "application/json" }), ...extraHeaders };
    const payload = body === undefined ? {} : { body: JSON.stringify(body) };
    // The headers (and so the guard) for each try: the one after a restart may find another listener on the port.
    // A guard's refusal is a ClientError, which no catch below takes for "cannot reach the daemon".
    const send = () =>
      fetchAnswered(
        `${this.url}${path}`,
        { method, headers: this.headers(sent), ...payload },
        this.options.answerTimeoutMs,
        (seconds) => unansweredMessage(this.url, `${method} ${path}`, seconds),
      );
    let res: Response;
    try {
      res = await send();
    } catch (err) {
      // The connection broke after the request went out (the daemon died or restarted while it had it). A read,
      // or a command the daemon runs once per Idempotency-Key (its keys are in the log: they survive a restart),
      // is asked again once a daemon listens there; any other command may have run, and is left to the caller.
      const safe = method === "GET" || extraHeaders["idempotency-key"] !== undefined;
      if (!safe || err instanceof ClientError || !brokeAfterSent(err)) throw this.unsent(method, path, err);
      res = await this.askAgain(send, method, path, err);
    }
    const text = await res.text();
    if (!res.ok) throw this.refusal(res.status, text);
    if (!text) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      // Another server on the port (a web server, a proxy's login page): JSON.parse's own message names neither.
      const type = res.headers.get("content-type") ?? "no Content-Type";
      throw new ClientError(
        res.status,
        "bad_response",
        `${this.url} answered ${method} ${path} with a body that is not JSON (${type.slice(0, 100)}): is it the address of \`brain serve\`?`,
      );
    }
  }

  private unsent(method: string, path: string, err: unknown): Error {
    return err instanceof ClientError ? err : unreachable(this.url, `${method} ${path}`, err);
  }

  /**
   * `send` again after the daemon broke the connection holding it (`first`), while nothing listens for at most
   * ClientOptions.restartWaitMs: asked at once, a restarting daemon is not there yet. A command that found nobody
   * still says it may have run (its first try reached the daemon); a read says what is true now.
   */
  private async askAgain(send: () => Promise<Response>, method: string, path: string, first: unknown) {
    const until = Date.now() + (this.options.restartWaitMs ?? 15_000);
    for (;;) {
      try {
        return await send();
      } catch (err) {
        if (err instanceof ClientError || !neverSent(err) || Date.now() >= until)
          throw this.unsent(method, path, method === "GET" || !neverSent(err) ? err : first);
      }
      await sleep(250);
    }
  }

  /** The daemon's refusal (an error status and its body) as a ClientError; see ClientOptions.tokenFile. */
  refusal(status: number, text: string): ClientError {
    const error = errorOf(status, text);
    const file = this.options.tokenFile;
    if (status !== 401 || file === undefined) return error;
    return new ClientError(
      status,
      error.code,
      `the daemon at ${this.url} does not know the admin token of ${file} (it said: ${error.message}): it is not the daemon of this $BRAIN_HOME. Start \`brain serve\` with this $BRAIN_HOME, or give that daemon's token with --token or $BRAIN_TOKEN`,
      error.field,
      error.detail,
    );
  }

  /** One endpoint of the daemon's table, its parameters, body and answer typed from the table's schemas. */
  call<N extends EndpointName>(
    name: N,
    params: PathParams<Endpoints[N]["path"]>,
    body?: EndpointBody<N>,
    query = "",
    headers: Record<string, string> = {},
  ): Promise<EndpointResponse<N>> {
    const { method, path } = ENDPOINTS[name];
    const url = `${endpointPath(path, params as Record<string, string>)}${query}`;
    const fields = USED_FIELDS[name];
    if (!fields) return this.request(method, url, body, headers);
    return this.request<EndpointResponse<N>>(method, url, body, headers).then((answer) => {
      const missing = missingField(answer, fields);
      if (missing === undefined) return answer;
      throw new ClientError(
        200,
        "bad_response",
        `${this.url} answered ${method} ${url} without ${missing}, which Brain's daemon sends: is it the address of \`brain serve\` (and of a Brain as new as this one)?`,
      );
    });
  }

  whoami() {
    return this.call("whoami", {});
  }

  harnesses() {
    return this.call("harnesses", {});
  }

  /** Every session of the token's tenant, oldest first. */
  async sessions(): Promise<SessionView[]> {
    return (await this.call("sessions", {})).sessions;
  }

  /**
   * A page of them: `limit` sessions after the session `after` (`next` is the following page's `after`), oldest
   * first unless `order` is "newest".
   */
  sessionPage(page: { limit: number; after?: string; order?: "oldest" | "newest" }) {
    const after = page.after === undefined ? "" : `&after=${encodeURIComponent(page.after)}`;
    const order = page.order === undefined ? "" : `&order=${page.order}`;
    return this.call("sessions", {}, undefined, `?limit=${page.limit}${after}${order}`);
  }

  session(id: string) {
    return this.call("session", { id });
  }

  /** A keyed create's retry (after a daemon restart too) gets the session the first made, not a second one. */
  create(body: CreateSessionBody, options: CommandOptions = {}) {
    return this.call("create", {}, body, "", keyHeader(options));
  }

  prompt(id: string, text: string, images?: PromptBody["images"], options: CommandOptions = {}) {
    const body = { text, ...(images?.length ? { images } : {}) };
    return this.call("prompt", { id }, body, "", keyHeader(options));
  }

  steer(id: string, text: string, options: CommandOptions = {}) {
    return this.call("steer", { id }, { text }, "", keyHeader(options));
  }

  interrupt(id: string, options: CommandOptions = {}) {
    return this.call("interrupt", { id }, undefined, "", keyHeader(options));
  }

  answer(id: string, requestId: string, body: AnswerBody, options: CommandOptions = {}) {
    return this.call("answer", { id, requestId }, body, "", keyHeader(options));
  }

  checkpoint(id: string, options: CommandOptions = {}) {
    return this.call("checkpoint", { id }, undefined, "", keyHeader(options));
  }

  fork(id: string, checkpoint?: string, options: CommandOptions = {}) {
    return this.call("fork", { id }, checkpoint ? { checkpoint } : {}, "", keyHeader(options));
  }

  /** A new session on harness `to` that continues this one's conversation. */
  handoff(id: string, to: string, model?: string, options: CommandOptions = {}) {
    return this.call("handoff", { id }, { to, ...(model ? { model } : {}) }, "", keyHeader(options));
  }

  /** Rewrites the session's native state from its log (a harness that lost it). A keyed retry rebuilds once. */
  rebuild(id: string, options: CommandOptions = {}) {
    return this.call("rebuild", { id }, {}, "", keyHeader(options));
  }

  /**
   * Writes a checkpoint (default: the latest) into `into`, a new or empty directory on the daemon's machine. A
   * keyed retry gets the first answer, not a refusal of the directory the first filled.
   */
  restore(id: string, into: string, checkpoint?: string, options: CommandOptions = {}) {
    return this.call(
      "restore",
      { id },
      { into, ...(checkpoint ? { checkpoint } : {}) },
      "",
      keyHeader(options),
    );
  }

  close(id: string, options: CommandOptions = {}) {
    return this.call("close", { id }, undefined, "", keyHeader(options));
  }

  /**
   * A keyed delete's retry (after a daemon restart too, on any node) gets 204 again, not a 404. A session others
   * were forked or handed off from is refused (409) unless `force`: they lose the history they had from it.
   */
  delete(id: string, options: CommandOptions & { force?: boolean } = {}) {
    return this.call("delete", { id }, undefined, options.force ? "?force=true" : "", keyHeader(options));
  }

  /** A keyed take's retry takes control once and gets the first answer (the same previous controller). */
  takeControl(id: string, client: string, options: CommandOptions = {}) {
    return this.call("control", { id }, { client }, "", keyHeader(options));
  }

  log(id: string, after = 0, limit = 1000) {
    return this.call("log", { id }, undefined, `?after=${after}&limit=${limit}`);
  }

  /** The session's events from `after` on, reconnecting with Last-Event-ID until `signal` aborts. */
  events(id: string, options: EventStreamOptions = {}): AsyncGenerator<SessionEvent> {
    return streamEvents(this, id, options);
  }
}

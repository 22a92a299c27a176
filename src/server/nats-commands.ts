// Commands to a session's owner by NATS request-reply: the owner subscribes to `<prefix>.cmd.<session>` while
// the session is open on it, so a request reaches whichever node owns it now, and "no responders" means none
// does (the sender then claims it itself). An owner that is frozen (SIGSTOP, a stalled VM) keeps its
// subscription, so a request to it goes unanswered: it is asked again in short attempts (each left open for its
// answer), for as long as the session's lease says that node still owns it; once the lease has expired the
// command runs on this node.
import {
  type Msg,
  type NatsConnection,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from "@nats-io/transport-node";
import { sleep } from "../core/sleep.js";
import { RoutedRequest, RoutedResponse } from "../protocol/routed.js";
import { describeIssue } from "../store/fs/session-record.js";
import { errorMessage } from "../store/nats/errors.js";
import { ApiError } from "./errors.js";
import type { CommandRouter, ForwardOptions } from "./routing.js";

export interface NatsCommandRouterOptions {
  /** Subjects start with this (default "brain"). */
  prefix?: string;
  /** This node's name: it serves `<prefix>.node.<name>`, where commands for sessions pinned to it go. */
  node?: string;
  /** The node whose lease holds the session now, if any (the store's lease bucket). */
  owner?: (session: string) => Promise<string | undefined>;
  /**
   * Whether this node's lease on a session it serves still holds. A command that reaches it once the lease ran out
   * (frozen past it, woken with requests waiting) is refused, not run: its sender stopped waiting and ran it on
   * the node that took over, and a command without a key would run twice.
   */
  holds?: (session: string) => boolean;
  /**
   * How long one attempt of a retryable (keyed) command waits for the owner before the lease is looked at (ms).
   * Commands answer at once (a prompt starts a turn), so a live owner answers well within it.
   */
  attemptMs?: number;
  /** How long an unkeyed command (one that must not be sent twice) waits for the owner (ms). */
  timeoutMs?: number;
  /** How long finding the node with a HITL request pending may take before it counts as pending nowhere (ms). */
  locateMs?: number;
  /**
   * How long gathering every node's answer waits for one more once answers stop coming (ms): nodes answer from
   * memory, so one later than this (frozen, or cut off) is left out rather than holding every list up.
   */
  gatherStallMs?: number;
  /** How long a keyed command keeps trying an owner whose lease stays alive before giving up (ms). */
  patienceMs?: number;
}

/** What one try of a forward came to. */
type Asked = { answer: RoutedResponse } | { error: unknown };
/** A keyed command's try that got no answer within attemptMs (it stays open). */
const TRY_ENDED: unique symbol = Symbol("try ended");

export class NatsCommandRouter implements CommandRouter {
  private readonly prefix: string;
  private readonly attemptMs: number;
  private readonly timeoutMs: number;
  private readonly patienceMs: number;
  private readonly locateMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: NatsCommandRouterOptions = {},
  ) {
    this.prefix = options.prefix ?? "brain";
    this.node = options.node;
    this.attemptMs = options.attemptMs ?? 2000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.patienceMs = options.patienceMs ?? 60_000;
    this.locateMs = options.locateMs ?? 2000;
  }

  private subject(session: string): string {
    return `${this.prefix}.cmd.${session}`;
  }

  serve(session: string, handle: (request: RoutedRequest) => Promise<RoutedResponse>): () => void {
    const holds = this.options.holds;
    return this.subscribe(this.subject(session), (request) => {
      // Sent on this session's subject, it is run for this session only: one naming another would run here, past
      // the check that sends a command to its session's owner (a forwarded request is never forwarded again).
      const other = otherSession(request.path, session);
      if (other !== undefined) return Promise.resolve(refused(400, "bad_request", other));
      return holds && !holds(session) ? Promise.resolve(notOwner(session, this.node)) : handle(request);
    });
  }

  readonly node: string | undefined;

  /** Commands sent to this node by name (sessions pinned to it that it does not have open). */
  serveNode(handle: (request: RoutedRequest) => Promise<RoutedResponse>): () => void {
    if (!this.node) return () => {};
    return this.subscribe(this.nodeSubject(this.node), handle);
  }

  /** The named node's answer; undefined when that node is not running. */
  async toNode(node: string, request: RoutedRequest): Promise<RoutedResponse | undefined> {
    try {
      const reply = await this.nc.request(this.nodeSubject(node), this.encode(request), {
        timeout: this.timeoutMs,
      });
      return answerOf(reply, `node ${node}`);
    } catch (err) {
      if (isNoResponders(err) || isTimeout(err)) return undefined;
      throw err;
    }
  }

  private nodeSubject(node: string): string {
    // A node name may hold dots (a host name): one subject token, whatever it is.
    return `${this.prefix}.node.${node.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  }

  /** Every node answers for the HITL requests pending here; the others stay silent. */
  serveLocate(find: (requestId: string, tenant: string | undefined) => string | undefined): () => void {
    const sub = this.nc.subscribe(`${this.prefix}.locate`, {
      callback: (err, msg) => {
        if (err) return;
        const { id, tenant } = locateQuery(msg.string());
        const session = find(id, tenant);
        if (session !== undefined) msg.respond(session);
      },
    });
    return () => sub.unsubscribe();
  }

  async locate(requestId: string, tenant: string): Promise<string | undefined> {
    try {
      // Answered from memory at once: the wait is only for the case where no node has it.
      const query = JSON.stringify({ id: requestId, tenant });
      const reply = await this.nc.request(`${this.prefix}.locate`, query, { timeout: this.locateMs });
      return reply.string() || undefined;
    } catch (err) {
      if (isNoResponders(err) || isTimeout(err)) return undefined;
      throw err;
    }
  }

  /** Every session of `tenant`, on any node, with the request pending: each node answers for its own. */
  async locateAll(requestId: string, tenant: string): Promise<string[]> {
    const sessions = new Set<string>();
    try {
      const query = JSON.stringify({ id: requestId, tenant });
      const replies = await this.nc.requestMany(`${this.prefix}.locate`, query, {
        strategy: "stall",
        stall: this.options.gatherStallMs ?? 300,
        maxWait: this.locateMs,
      });
      for await (const reply of replies) if (reply.string()) sessions.add(reply.string());
    } catch (err) {
      if (!isNoResponders(err) && !isTimeout(err)) throw err;
    }
    return [...sessions];
  }

  /** Every node answers a gather for itself: it runs the request as its caller, checking the caller's token. */
  serveGather(handle: (request: RoutedRequest) => Promise<RoutedResponse>): () => void {
    return this.subscribe(`${this.prefix}.gather`, handle);
  }

  async gather(request: RoutedRequest): Promise<RoutedResponse[]> {
    const answers: RoutedResponse[] = [];
    try {
      const replies = await this.nc.requestMany(`${this.prefix}.gather`, this.encode(request), {
        strategy: "stall",
        stall: this.options.gatherStallMs ?? 300,
        maxWait: this.locateMs,
      });
      // A node whose answer is not one (a bug, a stranger on the subject) is left out, not every node's answers.
      for await (const reply of replies) {
        const answer = RoutedResponse.safeParse(jsonOf(reply));
        if (answer.success) answers.push(answer.data);
      }
    } catch (err) {
      if (!isNoResponders(err) && !isTimeout(err)) throw err;
    }
    return answers;
  }

  async forward(
    session: string,
    request: RoutedRequest,
    options: ForwardOptions = {},
  ): Promise<RoutedResponse | undefined> {
    const giveUpAt = Date.now() + this.patienceMs;
    const encoded = this.encode(request);
    // A keyed command's tries all stay open until the patience ends, each still awaiting its answer: an owner where
    // the first request under the key still runs answers a retry only when its keyed wait ends (a 409 after
    // KEYED_WAIT_MS), long after one try; dropping each try at its end, the sender heard none and gave up, 503.
    const asked: Promise<Asked>[] = [];
    for (let attempt = 1; ; attempt++) {
      const timeout = options.retry ? Math.max(this.attemptMs, giveUpAt - Date.now()) : this.timeoutMs;
      asked.push(this.ask(session, encoded, timeout));
      const tryEnds = options.retry ? [sleep(this.attemptMs).then((): typeof TRY_ENDED => TRY_ENDED)] : [];
      const outcome = await Promise.race([...asked, ...tryEnds]);
      if (outcome !== TRY_ENDED) {
        // Served by no owner: that node let the session go (its lease ran out, or it is closing it).
        if ("answer" in outcome) return outcome.answer.notServed ? undefined : outcome.answer;
        if (isNoResponders(outcome.error)) return undefined;
        if (!isTimeout(outcome.error)) throw outcome.error;
      }
      if (!this.options.owner) return undefined;
      const owner = await this.options.owner(session).catch(() => "(unknown: NATS did not answer)");
      // The lease has run out: the owner is gone (or frozen past its lease); this node takes the session.
      if (owner === undefined) return undefined;
      // Without a key a second try, or a run here, could run the command twice: the owner, alive but slow (a
      // fork restoring a large checkpoint), may be running it now.
      if (!options.retry) {
        throw new ApiError(
          "unavailable",
          `session ${session}: its owner, node ${owner}, did not answer within ${this.timeoutMs} ms and still holds the session, so the command may be running there and was not run here; look at the session before sending it again`,
        );
      }
      if (Date.now() >= giveUpAt) {
        throw new ApiError(
          "unavailable",
          `session ${session}: its owner, node ${owner}, did not answer ${attempt} tries over ${this.patienceMs} ms while its lease stayed alive; retry with the same Idempotency-Key`,
        );
      }
      // The owner may be frozen: its lease expires within a TTL, then the next try finds no owner.
      await sleep(Math.min(200, this.attemptMs / 4));
    }
  }

  /** One try: the owner's answer, or why none came (never rejects: tries still open are raced again later). */
  private ask(session: string, encoded: string, timeout: number): Promise<Asked> {
    return this.nc
      .request(this.subject(session), encoded, { timeout })
      .then((reply): Asked => ({ answer: answerOf(reply, `the owner of session ${session}`) }))
      .catch((error: unknown) => ({ error }));
  }

  /**
   * The request as sent to the owner. NATS carries at most max_payload bytes a message (1 MB by default), less
   * than a body this node takes (8 MiB): one past it is refused here as too large, where sending it would fail.
   */
  private encode(request: RoutedRequest): string {
    const text = JSON.stringify(request);
    const limit = this.nc.info?.max_payload;
    const size = Buffer.byteLength(text);
    if (limit !== undefined && size > limit) {
      throw new ApiError(
        "payload_too_large",
        `this request is ${size} bytes as forwarded to the session's owner, another node, and NATS carries at most ${limit} between nodes (its max_payload): send less, or send it to the node that owns the session`,
      );
    }
    return text;
  }

  private subscribe(
    subject: string,
    handle: (request: RoutedRequest) => Promise<RoutedResponse>,
  ): () => void {
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        void (async () => {
          let answer: RoutedResponse;
          const request = RoutedRequest.safeParse(jsonOf(msg));
          try {
            answer = request.success
              ? await handle(request.data)
              : refused(400, "bad_request", `not a forwarded request: ${describeIssue(request.error)}`);
          } catch (e) {
            answer = {
              status: 502,
              contentType: "application/json",
              body: JSON.stringify({
                error: { code: "brain_error", message: `owner failed: ${errorMessage(e)}` },
              }),
            };
          }
          this.reply(msg, answer);
        })();
      },
    });
    return () => sub.unsubscribe();
  }

  /**
   * Sends the owner's answer back. NATS refuses a message past the server's max_payload by throwing, and a throw
   * here (a callback nobody awaits) would end the daemon: an answer too large to carry becomes an error that is.
   */
  private reply(msg: Msg, answer: RoutedResponse): void {
    let text = JSON.stringify(answer);
    const limit = this.nc.info?.max_payload;
    if (limit !== undefined && Buffer.byteLength(text) > limit) {
      text = JSON.stringify({
        status: 502,
        contentType: "application/json",
        body: JSON.stringify({
          error: {
            code: "brain_error",
            message: `the session's owner answered ${answer.status} with ${Buffer.byteLength(text)} bytes, more than NATS carries between nodes (max_payload ${limit}); send the request to the owner node itself`,
          },
        }),
      } satisfies RoutedResponse);
    }
    try {
      msg.respond(text);
    } catch {
      // The connection is closing or gone: the sender's request times out and it decides as for a lost owner.
    }
  }
}

/** An answer that refuses a message, with the error body every route gives. */
function refused(status: number, code: string, message: string): RoutedResponse {
  return { status, contentType: "application/json", body: JSON.stringify({ error: { code, message } }) };
}

/** A message's JSON, or undefined when it is not JSON (which no schema takes). */
function jsonOf(msg: Msg): unknown {
  try {
    return msg.json();
  } catch {
    return undefined;
  }
}

/** A node's answer, checked: one that is not an answer is the node's failure (502), not a crash of the caller's. */
function answerOf(reply: Msg, from: string): RoutedResponse {
  const answer = RoutedResponse.safeParse(jsonOf(reply));
  if (answer.success) return answer.data;
  throw new ApiError(
    "brain_error",
    `${from} answered with what is not an answer (${describeIssue(answer.error)}): a node of another version, or not a Brain node, on the cluster's subjects`,
  );
}

/**
 * Why a request sent on `session`'s subject is for another session, or undefined when it is this session's: a
 * command under /v1/sessions/<session>, or one of nui's HITL requests (by request id) naming no sessionId but it. Decoded as the router will: /v1/%73essions/B is /v1/sessions/B.
 */
function otherSession(path: string, session: string): string | undefined {
  let url: URL;
  let pathname: string;
  try {
    url = new URL(path, "http://x");
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return `the path of a request forwarded for session ${session} is not a path with good %-escapes`;
  }
  const named = url.searchParams.get("sessionId");
  const own =
    pathname === `/v1/sessions/${session}` ||
    pathname.startsWith(`/v1/sessions/${session}/`) ||
    (HITL_PATH.test(pathname) && (named === null || named === session));
  return own ? undefined : `a request for session ${session} names another (${path}): not run`;
}

/** nui's HITL requests, under /api/hitl or /nui/{token}/api/hitl: answered by request id, on the session's owner. */
const HITL_PATH = /^(?:\/nui\/[^/]+)?\/api\/hitl\/requests(?:\/|$)/;

/** The answer of a node whose lease on the session ran out before a command for it came. */
function notOwner(session: string, node: string | undefined): RoutedResponse {
  const message = `session ${session}: node ${node ?? "(this node)"} no longer owns the session (its lease ran out before the command reached it); the command did not run there: send it again`;
  return {
    notServed: true,
    status: 409,
    contentType: "application/json",
    body: JSON.stringify({ error: { code: "conflict", message } }),
  };
}

/**
 * A locate request: `{id, tenant}` as JSON; a node of an earlier version sends the bare id, and gets any tenant's
 * request, as it did.
 */
function locateQuery(text: string): { id: string; tenant?: string } {
  if (text.startsWith("{")) {
    try {
      const query = JSON.parse(text) as { id?: unknown; tenant?: unknown };
      if (typeof query.id === "string" && typeof query.tenant === "string")
        return { id: query.id, tenant: query.tenant };
    } catch {
      // not ours: taken as a bare id below
    }
  }
  return { id: text };
}

function isTimeout(err: unknown): boolean {
  return err instanceof TimeoutError || (err as Error)?.cause instanceof TimeoutError;
}

function isNoResponders(err: unknown): boolean {
  return (
    err instanceof NoRespondersError ||
    (err instanceof RequestError && err.isNoResponders()) ||
    (err as Error)?.cause instanceof NoRespondersError
  );
}

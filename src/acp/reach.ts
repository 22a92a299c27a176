// `brain acp --server URL` when the daemon goes away. A restart (a supervisor's, `brain serve` run again) takes
// seconds: a prompt's event stream reconnects, backing off as the CLI's does (`brain attach`, remote/tail.ts), and
// goes on from the last event it gave, so nothing is lost or given twice. A daemon gone for good (SIGKILL, never
// started again) left the prompt waiting until the editor cancelled it. After DAEMON_WAIT (default 60 s,
// $BRAIN_ACP_DAEMON_WAIT) the prompt ends with an error naming the address and since when it is unreachable, and
// every request after it that cannot reach the daemon fails at once with the same words, until one reaches it.
// A daemon that is up but answers the stream with an error is not unreachable: a 5xx (503 while it starts, a proxy's
// 502/504 while it restarts) is tried again within the same wait and then told with its own status and words
// (daemonError); a 4xx (404: the session is gone, 401: the token revoked) is final, and ends the prompt at once.
import { RequestError } from "@agentclientprotocol/sdk";
import { ClientError } from "../client/errors.js";
import { SILENCE_MS } from "../client/events.js";

/** How long a prompt's turn is followed while the daemon cannot be reached, by default. */
export const DAEMON_WAIT_SECONDS = 60;

/** How long a request waits for a hung daemon's GET /healthz before it is refused (DaemonReach.reached). */
export const PROBE_MS = 2000;

/** The event stream's reconnects: half a second after the drop, then backing off to a try every 5 s (the CLI's). */
export const RECONNECT_MS = { first: 500, max: 5000 };

/** The error a prompt ends with when the daemon answered its event stream with `answered` (a 5xx) past the wait. */
export function daemonError(
  url: string,
  sessionId: string,
  answered: ClientError,
  since: Date,
): RequestError {
  return RequestError.internalError({
    reason: "daemon_error",
    url,
    status: answered.status,
    code: answered.code,
    since: since.toISOString(),
    message:
      `the daemon at ${url} answers the turn's event stream with ${answered.status} since ${since.toISOString()}: ` +
      `${answered.message}. The turn was interrupted if the daemon took the interrupt; see \`brain attach ${sessionId}\` ` +
      "or its log (`brain serve` prints why), then send the request again",
  });
}

/** Whether the daemon at `url` answers, as far as brain acp's requests have seen; since when it has not. */
export class DaemonReach {
  private lostAt: Date | undefined;
  /** Lost to a daemon that took connections and answered nothing (hung, SIGSTOP): each try costs a whole timeout. */
  private hung = false;

  constructor(
    readonly url: string,
    readonly waitMs: number = DAEMON_WAIT_SECONDS * 1000,
    /** How long a turn's event stream may bring nothing, not even a heartbeat, before it is taken as dropped. */
    readonly silenceMs: number = SILENCE_MS,
  ) {}

  /** Not reached since `at` (kept when it was lost already: the first time it was not reached is what counts). */
  lost(at: Date = new Date(), hung = false): void {
    if (this.lostAt === undefined) this.hung = hung;
    this.lostAt ??= at;
  }

  /** A request reached it. */
  back(): void {
    this.lostAt = undefined;
    this.hung = false;
  }

  /**
   * Before a request, while a prompt has given up on a hung daemon: each request would wait the whole answer timeout
   * ($BRAIN_SERVER_TIMEOUT, 60 s) for nothing, so GET /healthz is asked first, for at most PROBE_MS. No answer: the
   * request is refused at once with refusal(). Any answer: the daemon is back, and the request is sent. (A command is
   * never sent and then abandoned: it could run once the daemon wakes, after the editor was told it failed.)
   */
  async reached(): Promise<void> {
    if (this.lostAt === undefined || !this.hung) return;
    const answered = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(PROBE_MS) }).then(
      async (res) => {
        await res.body?.cancel().catch(() => {});
        return true;
      },
      () => false,
    );
    if (!answered) throw this.refusal();
    this.back();
  }

  /** The error a request that cannot reach the daemon is answered with: the same words for each. */
  refusal(): RequestError {
    const since = (this.lostAt ?? new Date()).toISOString();
    if (this.hung)
      return RequestError.internalError({
        reason: "unreachable",
        url: this.url,
        since,
        message:
          `the daemon at ${this.url} has answered nothing since ${since} (it takes connections and does not answer, ` +
          "or they do not get through): is `brain serve` there hung (stopped, SIGSTOP)? Restart it (its sessions and " +
          "their logs are kept), then send the request again",
      });
    return RequestError.internalError({
      reason: "unreachable",
      url: this.url,
      since,
      message:
        `the daemon at ${this.url} is unreachable since ${since}: is \`brain serve\` running there? ` +
        "Start it again (its sessions and their logs are kept), then send the request again",
    });
  }

  /** `err` as refusal() when it says nothing listens at the daemon's address; undefined for any other error. */
  refusalFor(err: unknown): RequestError | undefined {
    if (!(err instanceof ClientError) || err.status !== 0 || err.code !== "unreachable") return undefined;
    // A command the daemon took and then died holding says it may have run: those words stay.
    if (!err.message.startsWith("cannot reach the daemon")) return undefined;
    this.lost();
    return this.refusal();
  }
}

// One `opencode serve` process and Brain's connection to it: a port the server binds itself and names on stdout, a
// random password (HTTP Basic, user "opencode") that only this process knows, a health check that retries until the server answers
// (it can take many seconds to start), JSON calls, and the `/event` SSE stream.
import { randomBytes } from "node:crypto";
import { Agent } from "undici";
import { fetchFailure } from "../../core/fetch-failure.js";
import { freePort } from "../../core/free-port.js";
import { type ContainerContext, HarnessError } from "../../core/harness.js";
import { headOf } from "../../core/redact.js";
import { MAX_ANSWER_BYTES, responseText } from "../../core/response-text.js";
import { readSse } from "../../protocol/sse.js";
import { CliProcess, type CliSpawn } from "../cli/child.js";
import { HeldReads } from "../held-reads.js";
import { ReadGate, ranOut, type WaitEnd } from "../read-gate.js";

const LABEL = "opencode";
/**
 * The server's user, set along with its password: opencode takes OPENCODE_SERVER_USERNAME from its environment,
 * where a host's env may name another, and would then refuse every call Brain makes.
 */
const USER = "opencode";

/**
 * Every request to the server: a redirect is not followed. A sandboxed opencode (its own network, or none) could
 * otherwise point Brain at an address only Brain's host reaches and have the answer read back as its own.
 */
const NO_REDIRECTS = { redirect: "manual" } as const;

/**
 * How long the event stream of a server that exited may go without a message before Brain stops reading it:
 * its socket closes with the process, so this bounds only a stream something else still holds open.
 */
const EXIT_READ_IDLE_MS = 3000;
/** How long after its event stream is lost the server's exit is waited for, the better reason (see lostEvents). */
const STREAM_LOSS_EXIT_MS = 1000;

/** What every request to the server is sent with: no redirects, and that server's own connections. */
type ServerRequest = RequestInit & { dispatcher: Agent };

/** The line `opencode serve --port 0` prints once it holds its port: "opencode server listening on http://…:N". */
const LISTENING = /listening on https?:\/\/\S*:(\d+)/;

export interface ServerStart extends Omit<CliSpawn, "args" | "onLine" | "onExit" | "label"> {
  extraArgs: string[];
  startTimeoutMs: number;
  onEvent(event: unknown): void;
  /** The process or its event stream is gone. */
  onGone(reason: string): void;
  /** Something Brain skipped and the session's clients should hear of, once per server. */
  onWarn?(message: string): void;
  /** In a container (sandbox: docker): makes the server's port inside answer on this host's loopback. */
  publish?: ContainerContext["publish"];
}

/** A call the server answered with an error status: the status tells a missing thing from a failure. */
export class OpencodeHttpError extends HarnessError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super("brain_error", message);
  }
}

export class OpencodeServer {
  /** Set once the server's port is known, before any call. */
  url = "";
  private readonly auth: string;
  private readonly events = new AbortController();
  /**
   * This server's own connections, destroyed with it. In fetch's shared pool, a connection to a server that had
   * stopped was used for the next server's first request, which the kernel then reset: `--port 0` binds 4096
   * whenever it is free, so the next server is on the same address, and undici opens a connection for the aborted
   * event stream as the server closes it, one no server ever takes.
   */
  private readonly pool = new Agent();
  /** The `/event` reader, once the stream is up: settles when the stream ended, was aborted or broke. */
  private reading: Promise<void> | undefined;
  /** How many messages the reader has taken from the stream. */
  private read = 0;
  /**
   * While the session's log is behind, the `/event` body is not read: the server's writes then wait on TCP, as a
   * CLI's do on its pipe (see ReadGate). Its answers come on that stream, so waits on them count while it is read.
   */
  private readonly held = new HeldReads();
  private readonly gate = new ReadGate(() => this.held);
  /** Set once the server exited: the end of its stream is then that exit, which is reported as it. */
  private exiting = false;

  private constructor(
    readonly child: CliProcess,
    password: string,
    /** How long a call (or the event stream's headers) may take: none of Brain's calls waits on the model. */
    private readonly answerMs: number,
    /** The server's port published from its container, when it runs in one. */
    private readonly published?: { close(): Promise<void> },
  ) {
    this.auth = `Basic ${Buffer.from(`${USER}:${password}`).toString("base64")}`;
  }

  /** A request's options: `init`, never a redirect, on this server's own connections. */
  private request(init: RequestInit): ServerRequest {
    return { ...init, ...NO_REDIRECTS, dispatcher: this.pool };
  }

  static async start(spec: ServerStart): Promise<OpencodeServer> {
    const password = randomBytes(24).toString("hex");
    // On this host the server binds a port the OS picks and names it: a port Brain chose and let go would be free
    // for any local user to take while opencode starts, and to answer the health check and read the session's
    // prompts. A container's port is chosen here, as it must be published first (the health check's first tries
    // then fail inside, like any slow start): the container has a network namespace of its own, where only the
    // session's programs run, and this host's side of it is held by Brain's own listener from then on.
    const fixed = spec.publish ? await freePort() : undefined;
    const published = fixed === undefined ? undefined : await spec.publish?.(fixed);
    let announce: (port: number) => void = () => {};
    const announced = new Promise<number>((resolve) => {
      announce = resolve;
    });
    let server: OpencodeServer | undefined;
    // Said once: the program's exit after its event stream ended is the same loss, not a second one (which would
    // fail whatever turn the next server runs by then).
    let reported = false;
    const gone = (reason: string) => {
      if (reported) return;
      reported = true;
      spec.onGone(reason);
    };
    const child = new CliProcess({
      label: LABEL,
      command: spec.command,
      args: ["serve", "--hostname", "127.0.0.1", "--port", String(fixed ?? 0), ...spec.extraArgs],
      env: { ...spec.env, OPENCODE_SERVER_USERNAME: USER, OPENCODE_SERVER_PASSWORD: password },
      cwd: spec.cwd,
      ...(spec.launcher ? { launcher: spec.launcher } : {}),
      ...(spec.spawner ? { spawner: spec.spawner } : {}),
      onLine: (line) => {
        const port = LISTENING.exec(line)?.[1];
        if (port) announce(Number(port));
      },
      onExit: (reason) => {
        const letGo = () => {
          server?.events.abort();
          void server?.pool.destroy();
          void published?.close();
          gone(reason);
        };
        // What the server wrote before it exited is read first, however far the session's log is behind, as a
        // CLI's pipe is: aborting the stream at once dropped the events the gate was holding in its socket.
        if (server?.reading) void server.readToEnd().then(letGo);
        else letGo();
      },
    });
    server = new OpencodeServer(child, password, spec.startTimeoutMs, published);
    const deadline = Date.now() + spec.startTimeoutMs;
    try {
      const port = fixed ?? (await server.announcedPort(announced, spec.startTimeoutMs));
      server.url = `http://127.0.0.1:${port}`;
      await server.waitHealthy(spec.startTimeoutMs, deadline);
      await server.subscribe(spec, gone);
    } catch (err) {
      child.kill("SIGKILL");
      await server.pool.destroy();
      await published?.close();
      throw err;
    }
    return server;
  }

  /** The port the server says it listens on; it exiting first, or never saying, fails the start. */
  private async announcedPort(announced: Promise<number>, timeoutMs: number): Promise<number> {
    let late: NodeJS.Timeout | undefined;
    const port = await Promise.race([
      announced,
      this.child.exited.then(() => undefined),
      new Promise<null>((resolve) => {
        late = setTimeout(() => resolve(null), timeoutMs);
      }),
    ]).finally(() => clearTimeout(late));
    if (typeof port === "number") return port;
    if (port === undefined) throw new HarnessError("brain_error", this.child.describeExit());
    const tail = this.child.stderrTail();
    throw new HarnessError(
      "brain_error",
      `${LABEL}: the server did not say which port it listens on within ${timeoutMs / 1000} s (no ` +
        `"opencode server listening on http://…" line on its stdout; is this opencode serve?)` +
        (tail ? `; its stderr ended with: ${tail}` : ""),
    );
  }

  /** GET /global/health until it answers 200; a server that is slow to start is normal, one that exits is not. */
  private async waitHealthy(timeoutMs: number, deadline: number): Promise<void> {
    let last = "no answer";
    while (Date.now() < deadline) {
      if (!this.child.alive) throw new HarnessError("brain_error", this.child.describeExit());
      try {
        const res = await fetch(
          `${this.url}/global/health`,
          this.request({ headers: { authorization: this.auth }, signal: AbortSignal.timeout(2000) }),
        );
        if (res.ok) return;
        last = `HTTP ${res.status}`;
      } catch (err) {
        last =
          ((err as Error & { cause?: { code?: string } }).cause?.code ?? (err as Error).message) || "error";
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const tail = this.child.stderrTail();
    throw new HarnessError(
      "brain_error",
      `${LABEL}: the server did not become healthy within ${timeoutMs / 1000} s (last: ${last})` +
        (tail ? `; its stderr ended with: ${tail}` : ""),
    );
  }

  /** Opens `/event` and resolves once the stream is up (its first event is `server.connected`). */
  private async subscribe(
    { onEvent, onWarn = () => {}, backlog }: Pick<ServerStart, "onEvent" | "onWarn" | "backlog">,
    onGone: (reason: string) => void,
  ): Promise<void> {
    const late = setTimeout(() => this.events.abort(this.noAnswer("GET", "/event")), this.answerMs);
    const res = await fetch(
      `${this.url}/event`,
      this.request({
        headers: { authorization: this.auth, accept: "text/event-stream" },
        signal: this.events.signal,
      }),
    )
      .catch((err) => {
        throw this.events.signal.aborted ? this.events.signal.reason : this.dropped("GET /event", err);
      })
      .finally(() => clearTimeout(late));
    if (!res.ok || !res.body) {
      void res.body?.cancel().catch(() => {});
      throw new HarnessError("brain_error", `${LABEL}: GET /event answered HTTP ${res.status}`);
    }
    const body = res.body;
    let skipped = false;
    const { held, gate } = this;
    // A stream aborted (stopped, or the server gone) is not held any more.
    this.events.signal.addEventListener("abort", () => gate.stop(), { once: true });
    this.reading = (async () => {
      try {
        for await (const message of readSse(body)) {
          this.read++;
          gate.read();
          if (backlog) await held.check(() => gate.check("session", backlog));
          let event: unknown;
          try {
            event = JSON.parse(message.data);
          } catch {
            // Nothing Brain can use, and the stream goes on; said once, as a server that sends one may send many.
            if (!skipped)
              onWarn(
                `${LABEL}: the server sent an event that is not JSON, which Brain skips (and any more like it): ${headOf(message.data, 200)}`,
              );
            skipped = true;
            continue;
          }
          onEvent(event);
        }
        if (!this.events.signal.aborted && !this.exiting)
          void this.lostEvents(onGone, "the server closed its event stream");
      } catch (err) {
        if (!this.events.signal.aborted && !this.exiting)
          void this.lostEvents(onGone, `the event stream broke: ${(err as Error).message}`);
      }
    })();
  }

  /**
   * The server exited: its stream is read to its end, past the read gate's hold, so the events it wrote last
   * reach the session before the turn is failed as lost; given up once it goes EXIT_READ_IDLE_MS without one.
   */
  private async readToEnd(): Promise<void> {
    this.exiting = true;
    this.gate.stop();
    let ended = false;
    const reading = this.reading?.then(() => {
      ended = true;
    });
    for (let before = -1; !ended && before !== this.read; ) {
      before = this.read;
      let late: NodeJS.Timeout | undefined;
      await Promise.race([
        reading,
        new Promise((resolve) => (late = setTimeout(resolve, EXIT_READ_IDLE_MS))),
      ]);
      clearTimeout(late);
    }
  }

  /**
   * Without its events the server is no use to the session: the harness forgets it and starts another at the next
   * prompt, so this one is stopped, not left running with the session's database open and no one to end it.
   */
  private async lostEvents(onGone: (reason: string) => void, why: string): Promise<void> {
    // A killed server's stream breaks before its exit is seen, and the exit (a signal, its stderr) is what says
    // why: it is reported instead (the server's onExit), when it comes soon after.
    const exit = new Promise<boolean>((resolve) => setTimeout(resolve, STREAM_LOSS_EXIT_MS, false).unref());
    if (await Promise.race([this.child.exited.then(() => true), exit])) return;
    onGone(`${LABEL}: ${why}`);
    void this.stop();
  }

  /**
   * Calls `fire` after `ms` of reading the event stream, where the server's answers to an interrupt come: not its
   * stdout, which says only its port (CliConnection's default). See ReadGate.afterRead.
   */
  afterRead(ms: number, fire: (end: WaitEnd) => void): () => void {
    return this.gate.afterRead(ms, fire);
  }

  /** A JSON call; a non-2xx answer is a brain_error with the server's own words. */
  async call(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
    // A server that takes a call and never answers would hold the turn (or its start) for good. Counted while its
    // event stream is read: a call's handler may wait for the events it publishes to be written to that stream,
    // which waits on TCP while the session's log is behind, and then the silence is Brain's, not the server's.
    const late = new AbortController();
    const { signal } = late;
    let end: WaitEnd = "silent";
    const cancel = this.afterRead(this.answerMs, (ended) => {
      end = ended;
      late.abort();
    });
    let res: Response;
    let answer: { text: string; over: boolean };
    try {
      res = await fetch(
        `${this.url}${path}`,
        this.request({
          method,
          headers: {
            authorization: this.auth,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal,
        }),
      );
      answer = await responseText(res, MAX_ANSWER_BYTES);
    } catch (err) {
      throw signal.aborted ? this.noAnswer(method, path, end) : this.dropped(`${method} ${path}`, err);
    } finally {
      cancel();
    }
    const { text, over } = answer;
    if (over) {
      throw new HarnessError(
        "brain_error",
        `${LABEL}: ${method} ${path} answered more than ${MAX_ANSWER_BYTES >> 20} MiB (HTTP ${res.status}), more than Brain reads of an answer`,
      );
    }
    if (!res.ok) {
      throw new OpencodeHttpError(
        res.status,
        `${LABEL}: ${method} ${path} answered HTTP ${res.status}: ${headOf(text, 500)}`,
      );
    }
    if (text === "") return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }

  /**
   * A request the server took and dropped (a reset, a crash mid-answer): fetch says only "fetch failed", which
   * names neither the call nor why, so its cause and the server's last words are added.
   */
  private dropped(request: string, err: unknown): HarnessError {
    const why = fetchFailure(err);
    const tail = this.child.stderrTail();
    return new HarnessError(
      "brain_error",
      `${LABEL}: ${request} got no answer: ${why}` +
        (tail ? `; the server's stderr ended with: ${tail}` : "; the server may have crashed"),
    );
  }

  private noAnswer(method: string, path: string, end: WaitEnd = "silent"): HarnessError {
    return new HarnessError(
      "brain_error",
      `${LABEL}: ${method} ${path}: no answer${ranOut(end, this.answerMs, "timeout", "s")}`,
    );
  }

  async stop(): Promise<void> {
    this.events.abort();
    this.child.kill("SIGTERM");
    if (!(await this.child.exitsWithin(3000))) this.child.kill("SIGKILL");
    await this.pool.destroy();
    await this.published?.close();
  }
}

// A client of the daemon's HTTP API: what `brain attach`, `brain run --server`, `brain acp --server`, the
// tests and the benchmarks use. Errors carry the daemon's status, code and message.
import type {
  AnswerBody,
  CheckpointView,
  CreateSessionBody,
  PromptBody,
  SessionView,
} from "../protocol/api.js";
import type { SessionEvent } from "../protocol/events.js";
import { ClientError, errorOf } from "./errors.js";
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
}

export class BrainClient {
  readonly url: string;

  constructor(readonly options: ClientOptions) {
    this.url = options.url.replace(/\/+$/, "");
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
      ...(this.options.client ? { "x-brain-client": this.options.client } : {}),
      ...(this.options.role ? { "x-brain-role": this.options.role } : {}),
      ...extra,
    };
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        headers: this.headers(body === undefined ? {} : { "content-type": "application/json" }),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new ClientError(
        0,
        "unreachable",
        `cannot reach the daemon at ${this.url} (${cause}): is \`brain serve\` running?`,
      );
    }
    const text = await res.text();
    if (!res.ok) throw errorOf(res.status, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  whoami() {
    return this.request<{ tenant: string; role: string; auth: boolean }>("GET", "/v1/whoami");
  }

  harnesses() {
    return this.request<{ harnesses: { name: string; steering: boolean }[] }>("GET", "/v1/harnesses");
  }

  async sessions(): Promise<SessionView[]> {
    return (await this.request<{ sessions: SessionView[] }>("GET", "/v1/sessions")).sessions;
  }

  session(id: string) {
    return this.request<SessionView>("GET", `/v1/sessions/${enc(id)}`);
  }

  create(body: CreateSessionBody) {
    return this.request<SessionView>("POST", "/v1/sessions", body);
  }

  prompt(id: string, text: string, images?: PromptBody["images"]) {
    return this.request<{ turn: string; session: string }>("POST", `/v1/sessions/${enc(id)}/prompt`, {
      text,
      ...(images?.length ? { images } : {}),
    });
  }

  steer(id: string, text: string) {
    return this.request<{ ok: true }>("POST", `/v1/sessions/${enc(id)}/steer`, { text });
  }

  interrupt(id: string) {
    return this.request<{ ok: true }>("POST", `/v1/sessions/${enc(id)}/interrupt`);
  }

  answer(id: string, requestId: string, body: AnswerBody) {
    return this.request<{ ok: true }>("POST", `/v1/sessions/${enc(id)}/requests/${enc(requestId)}`, body);
  }

  checkpoint(id: string) {
    return this.request<CheckpointView>("POST", `/v1/sessions/${enc(id)}/checkpoints`);
  }

  fork(id: string, checkpoint?: string) {
    return this.request<SessionView>(
      "POST",
      `/v1/sessions/${enc(id)}/fork`,
      checkpoint ? { checkpoint } : {},
    );
  }

  /** A new session on harness `to` that continues this one's conversation. */
  handoff(id: string, to: string, model?: string) {
    return this.request<SessionView>("POST", `/v1/sessions/${enc(id)}/handoff`, {
      to,
      ...(model ? { model } : {}),
    });
  }

  close(id: string) {
    return this.request<SessionView>("POST", `/v1/sessions/${enc(id)}/close`);
  }

  delete(id: string) {
    return this.request<void>("DELETE", `/v1/sessions/${enc(id)}`);
  }

  takeControl(id: string, client: string) {
    return this.request<{ controller: string; previous?: string }>(
      "POST",
      `/v1/sessions/${enc(id)}/control`,
      {
        client,
      },
    );
  }

  async log(id: string, after = 0, limit = 1000) {
    return this.request<{ events: SessionEvent[]; last_seq: number }>(
      "GET",
      `/v1/sessions/${enc(id)}/log?after=${after}&limit=${limit}`,
    );
  }

  /** The session's events from `after` on, reconnecting with Last-Event-ID until `signal` aborts. */
  events(id: string, options: EventStreamOptions = {}): AsyncGenerator<SessionEvent> {
    return streamEvents(this, id, options);
  }
}

const enc = encodeURIComponent;

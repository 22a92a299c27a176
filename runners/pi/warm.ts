// pi-ai loads a provider's SDK (hundreds of modules for openai's) on its first request, and Node its fetch on
// first use: a new session's first reply paid both, and the first run of all that code besides (the HTTP
// parser's WebAssembly, the streams, the SDK's request path): measured 250-600 ms against 15-70 ms for the next
// reply. The runner does it ahead: it loads the open frame's API as soon as it is known, and a runner that sits
// unopened (a warm spare) loads every API it supports and rehearses whole turns in a throwaway directory
// against a server of its own on loopback (no credentials, nothing leaves the machine), so the session that
// takes the spare finds all of it ready. A runner opened at once (a one-shot `brain run`) loads only what its
// session uses; a spare taken mid-rehearsal rehearses no further turn.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { type Runner, type RunnerHost, serve } from "../../sdk/ts/index.js";
import type { RunnerRequest } from "../../src/protocol/runner.js";
import type { WireApi } from "./settings.js";

/** pi-ai's public entry of the module behind each API (the very module its own lazy loader imports). */
const PROVIDER_MODULES: Record<WireApi, string> = {
  "openai-completions": "@mariozechner/pi-ai/openai-completions",
  "openai-responses": "@mariozechner/pi-ai/openai-responses",
  "anthropic-messages": "@mariozechner/pi-ai/anthropic",
};

/** How long a started runner waits for an open before it counts as a spare. */
const SPARE_AFTER_MS = 100;

/**
 * Turns rehearsed. One runs all the code once, but V8 leaves code run once to its interpreter: after one, a new
 * session's first request still took about twice the CPU to build (pi-ai, the provider SDK, fetch) that a warm
 * session's did; after five, about the same. Each is a few ms of CPU in a runner nobody waits for.
 */
export const REHEARSALS = 5;

export class Warmer {
  private readonly started = new Set<WireApi>();
  private readonly idle: NodeJS.Timeout;
  private settle: (rehearsed: boolean) => void = () => {};
  /** Whether a rehearsal turn ran to its end: false for a runner opened before it counted as a spare. */
  readonly warmed = new Promise<boolean>((resolve) => {
    this.settle = resolve;
  });
  private taken = false;
  private rehearsing = false;
  private count: (turns: number) => void = () => {};
  /** How many turns the rehearsal ran, once it has ended (0 when none started): for tests. */
  readonly rehearsed = new Promise<number>((resolve) => {
    this.count = resolve;
  });

  constructor(spareAfterMs = SPARE_AFTER_MS) {
    this.idle = setTimeout(() => void this.all(), spareAfterMs);
    // Never what keeps the runner alive.
    this.idle.unref();
  }

  /** A session opened on `api` (pi-ai's name): load it now (in the background), and nothing else. */
  opened(api: string): void {
    clearTimeout(this.idle);
    this.taken = true;
    this.settle(false);
    if (!this.rehearsing) this.count(0);
    if (api in PROVIDER_MODULES) void this.load(api as WireApi);
  }

  private async all(): Promise<void> {
    this.rehearsing = true;
    for (const api of Object.keys(PROVIDER_MODULES) as WireApi[]) await this.load(api);
    // Warming is never worth failing for: the first real request reports its own errors.
    const turns = await rehearse((done) => !this.taken && done < REHEARSALS).catch(() => undefined);
    this.settle(turns !== undefined);
    this.count(turns ?? 0);
  }

  private load(api: WireApi): Promise<void> {
    if (this.started.has(api)) return Promise.resolve();
    this.started.add(api);
    // Node compiles its fetch implementation (undici, ~100 ms) when one of its classes is first read.
    void globalThis.Headers;
    // A failure here is the first request's to report, as it would have been without warming.
    return import(PROVIDER_MODULES[api]).then(
      () => {},
      () => {},
    );
  }
}

/** One chat-completions reply, streamed as an OpenAI-compatible server streams it. */
function reply(): string {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: "warm", object: "chat.completion.chunk", created: 0, model: "warm", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return `${chunk({ role: "assistant", content: "ok" }, null)}${chunk({}, "stop")}data: [DONE]\n\n`;
}

const PREFIX = "brain-pi-warm-";

/**
 * Removes the rehearsal directories of runners that died mid-rehearsal: a spare is killed without warning when
 * its host closes, so its own cleanup may never run. Named by pid; a live (or reused) pid's is left alone.
 */
async function sweep(): Promise<void> {
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    const pid = Number(new RegExp(`^${PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => {});
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The SDK's host over in-memory streams: frames in as Brain writes them, replies awaited by attachment and id. */
class LoopbackHost {
  private readonly input = new PassThrough();
  private readonly waits = new Map<string, (error: string | undefined) => void>();
  private readonly host: RunnerHost;

  constructor(runner: Runner) {
    const output = {
      write: (chunk: string) => {
        // Events stream by (encoded as a real turn's are); only replies are waited for.
        if (!chunk.includes('"result"') && !chunk.includes('"error"')) return true;
        const frame = JSON.parse(chunk) as { attachment: string; id: string; error?: { message: string } };
        this.waits.get(`${frame.attachment}/${frame.id}`)?.(frame.error?.message);
        return true;
      },
    };
    this.host = serve(runner, {
      input: this.input,
      output,
      log: () => {},
      exit: () => {},
      guardStdout: false,
    });
  }

  /** Writes each frame at once (an open's followers wait for it in the host), then awaits the last one's reply. */
  request(...frames: RunnerRequest[]): Promise<void> {
    const last = frames.at(-1)!;
    const reply = new Promise<void>((resolve, reject) => {
      this.waits.set(`${last.attachment}/${last.id}`, (error) => {
        this.waits.delete(`${last.attachment}/${last.id}`);
        if (error === undefined) resolve();
        else reject(new Error(`rehearsal: ${error}`));
      });
    });
    for (const frame of frames) this.input.write(`${JSON.stringify(frame)}\n`);
    return reply;
  }

  close(): Promise<void> {
    this.input.end();
    return this.host.closed;
  }
}

/**
 * Whole turns of pi sessions (agent loop, transcript, pi-ai, the provider SDK, fetch) against a loopback server of
 * this process, in a throwaway directory, each in a session of its own as a new session's first turn is, while
 * `another` says so. Through the SDK's own host, fed the frames Brain sends (open with a tool bound, prompt,
 * detach): the line splitting, frame checks, dispatch, event and reply encoding a session's first turn runs are
 * warm too. Returns how many ran.
 */
async function rehearse(another: (done: number) => boolean): Promise<number> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(reply());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await sweep();
  const dir = await mkdtemp(join(tmpdir(), `${PREFIX}${process.pid}-`));
  let host: LoopbackHost | undefined;
  try {
    const { openPiSession } = await import("./session.js");
    host = new LoopbackHost({ open: (params) => openPiSession(params, () => {}) });
    const params = {
      session_id: "warm",
      config: { model: "warm/warm" },
      tools: [{ name: "warm", description: "unused", input_schema: { type: "object", properties: {} } }],
      provider: {
        api_key: "warm",
        base_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        api: "openai-completions",
      },
    };
    let done = 0;
    for (; another(done); done++) {
      const attachment = `warm-${done}`;
      await host.request(
        { attachment, id: "1", method: "open", params: { ...params, dir: join(dir, String(done)) } },
        { attachment, turn: "warm", id: "2", method: "prompt", params: { text: "warm" } },
      );
      await host.request({ attachment, id: "3", method: "detach", params: null });
    }
    return done;
  } finally {
    await host?.close().catch(() => {});
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

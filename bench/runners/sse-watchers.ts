// The SSE benchmarks' watchers, in a process of their own (as a browser or CLI would be): opens W event
// streams on one session, and for every delta takes the runner's stamp (process.hrtime ns, comparable across
// processes) from the text to measure its delay, without JSON-parsing the whole event. Paused watchers open
// their stream and never read it. Talks to the parent over stdout, one JSON line each:
//   {"ready":true}                                  every stream has its response headers
//   {"events":N,"p50Ms":...,"p99Ms":...,"maxMs":...,"firstNs":...,"lastNs":...}   every reading watcher is done
// With `urls` (and `afters`, one Last-Event-ID each), W watchers open on every one of those streams instead.
import http from "node:http";

/** What the parent passes (argv[2], as JSON). */
export interface WatcherConfig {
  url: string;
  urls?: string[];
  afters?: number[];
  token?: string;
  watchers: number;
  paused: number;
  after: number;
  /** Keep each delay (latency runs); a throughput run only counts. */
  record: boolean;
}

const config = JSON.parse(process.argv[2] ?? "{}") as WatcherConfig;
const urls = config.urls ?? [config.url];
const streams = urls.length;
const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
const delays: number[] = [];
let events = 0;
let firstNs = 0n;
let lastNs = 0n;
let ready = 0;
let done = 0;
const STAMP = '"text":"';

function report(line: unknown): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function connected(): void {
  if (++ready === (config.watchers + config.paused) * streams) report({ ready: true });
}

function open(paused: boolean, stream = 0): void {
  const headers: Record<string, string> = {
    accept: "text/event-stream",
    "last-event-id": String(config.afters?.[stream] ?? config.after),
  };
  if (config.token) headers.authorization = `Bearer ${config.token}`;
  http
    .get(urls[stream]!, { agent, headers }, (res) => {
      if (res.statusCode !== 200) {
        process.stderr.write(`watcher: HTTP ${res.statusCode}\n`);
        process.exit(1);
      }
      connected();
      if (paused) {
        res.pause();
        return;
      }
      res.setEncoding("utf8");
      let buffer = "";
      let finished = false;
      res.on("data", (chunk: string) => {
        const now = process.hrtime.bigint();
        buffer += chunk;
        let start = 0;
        for (let end = buffer.indexOf("\n\n", start); end >= 0; end = buffer.indexOf("\n\n", start)) {
          if (buffer.startsWith("id:", start)) {
            const at = buffer.indexOf(STAMP, start);
            if (
              at >= 0 &&
              at < end &&
              buffer.startsWith('"assistant.delta"', buffer.lastIndexOf('"type":', at) + 7)
            ) {
              events++;
              if (firstNs === 0n) firstNs = now;
              lastNs = now;
              if (config.record) {
                const stamp = BigInt(buffer.slice(at + STAMP.length, at + STAMP.length + 20));
                delays.push(Number(now - stamp) / 1e6);
              }
            } else if (!finished && buffer.lastIndexOf('"turn.settled"', end) > start) {
              finished = true;
              if (++done === config.watchers * streams) {
                delays.sort((a, b) => a - b);
                const rank = (q: number) =>
                  delays[Math.min(delays.length - 1, Math.ceil(q * delays.length) - 1)] ?? -1;
                const summary = { events, p50Ms: rank(0.5), p99Ms: rank(0.99), maxMs: delays.at(-1) ?? -1 };
                // stdout is a pipe: exit only once the line is out.
                process.stdout.write(
                  `${JSON.stringify({ ...summary, firstNs: String(firstNs), lastNs: String(lastNs) })}\n`,
                  () => process.exit(0),
                );
              }
            }
          }
          start = end + 2;
        }
        buffer = buffer.slice(start);
      });
    })
    .on("error", (err) => {
      process.stderr.write(`watcher: ${err.message}\n`);
      process.exit(1);
    });
}

for (let stream = 0; stream < streams; stream++) {
  for (let i = 0; i < config.watchers; i++) open(false, stream);
  for (let i = 0; i < config.paused; i++) open(true, stream);
}

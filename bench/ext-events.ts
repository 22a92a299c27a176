// ext-events: a nui extension host floods 200-byte `harness.event` text notifications over stdio; Brain's real
// path (ExtensionHarnessFactory → JSON-RPC peer → lenient decode → RunTranslator → Session → JsonlEventLog
// group commit → session.log.subscribe) delivers them as assistant.delta events to a reader. Baseline: the
// same host child over the same pipe to a parent that only splits lines (LineSplitter) and JSON.parses them.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import { loadExtension } from "../src/harnesses/ext/extensions.js";
import { ExtensionHarnessFactory } from "../src/harnesses/ext/factory.js";
import { pythonSdkDir } from "../src/harnesses/ext/sdk-paths.js";
import { NuiApiServer } from "../src/harnesses/nui/api-server.js";
import { LineSplitter } from "../src/protocol/ndjson.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { watchTurn } from "./lib/brain.js";
import { makeTemp, removeTemp, withTimeout } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, rateRow, type Sample, timed } from "./lib/measure.js";
import { benchSpawner, spawnViaHost } from "./lib/spawn.js";
import type { BenchOptions } from "./options.js";

const WARMUP = 20_000;
/**
 * Untimed rounds of each side before the timed ones, as relay's: no bench before this one runs Brain's extension
 * path, and in three runs of this bench the first round was the slowest of both sides (Brain 476-596 k events/s
 * against a median of 680-720 k; the baseline's 713-754 k against 1.1 M, twice in three).
 */
const WARM_ROUNDS = 2;

/** dist/bench → dist/bench/runners/ext-flood-host.js */
function hostPath(): string {
  return fileURLToPath(new URL("./runners/ext-flood-host.js", import.meta.url));
}

/** The raw side: harness.run over the pipe, count `harness.event` lines until the reply. */
async function rawFlood(n: number): Promise<number> {
  // From the bench's spawn host, as the subject's extension host (bench/lib/spawn.ts).
  const child = await spawnViaHost(process.execPath, [hostPath()]);
  try {
    const run = (id: number, message: string) =>
      new Promise<number>((resolve) => {
        let events = 0;
        const splitter = new LineSplitter((line) => {
          const msg = JSON.parse(line) as { id?: number; method?: string };
          if (msg.method === "harness.event") events++;
          else if (msg.id === id) resolve(events);
        });
        child.stdout!.removeAllListeners("data");
        child.stdout!.on("data", (chunk: Buffer) => splitter.push(chunk));
        child.stdin!.write(
          `${JSON.stringify({ jsonrpc: "2.0", id, method: "harness.run", params: { message, runId: `r${id}` } })}\n`,
        );
      });
    await withTimeout(run(1, `flood ${WARMUP}`), 60_000, "ext raw warm-up");
    const { seconds, result } = await timed(() => withTimeout(run(2, `flood ${n}`), 60_000, "ext raw flood"));
    // n text events + done
    if (result !== n + 1) throw new Error(`ext raw: ${result} events arrived, ${n + 1} sent`);
    return n / seconds;
  } finally {
    child.kill("SIGKILL");
  }
}

/** A one-harness extension whose stdio host is the flood host. */
function floodExtension(dir: string) {
  const extDir = join(dir, "ext-flood");
  mkdirSync(extDir, { recursive: true });
  writeFileSync(
    join(extDir, "extension.yaml"),
    `apiVersion: nui.plmbr.dev/extension/v1\nname: ext-flood\nversion: "1"\ncontributions:\n  harnesses:\n    source:\n      file: harnesses.yaml\n    runtime:\n      command: ${JSON.stringify([process.execPath, hostPath()])}\n`,
  );
  writeFileSync(join(extDir, "harnesses.yaml"), "harnesses:\n  - id: flood\n");
  return loadExtension(extDir);
}

export async function extEventsBench(opts: BenchOptions): Promise<BenchRow[]> {
  const n = opts.quick ? 100_000 : 200_000;
  log(
    `ext-events: ${n} harness.event text notifications of 200 B per run (after a ${WARMUP}-event warm-up), ${opts.reps} rounds after ${WARM_ROUNDS} untimed`,
  );

  const baseline = async (): Promise<Sample> => {
    const { foreign, result } = await timed(() => rawFlood(n));
    return { value: result, foreign };
  };

  const subject = async (): Promise<Sample> => {
    const home = await makeTemp("ext-events");
    const ext = floodExtension(home);
    const api = new NuiApiServer();
    const factory = new ExtensionHarnessFactory(ext, ext.harnesses[0]!, {
      api,
      pythonSdkDir: pythonSdkDir(),
      home,
      spawner: benchSpawner,
    });
    const store = new FsSessionStore(join(home, "brain"));
    const brain = new Brain({
      store,
      harnesses: new HarnessRegistry([factory]),
      tools: new ToolRouter([new BuiltinTools()]),
    });
    try {
      const session = await brain.create({ harness: factory.name });
      await watchTurn(session, `flood ${WARMUP}`);
      const { foreign, result } = await timed(() => watchTurn(session, `flood ${n}`));
      // The session's redactor knows the host's NUI_API_URL token, so it may hold a delta's trailing run of the
      // token's characters until the next (one delta more at the end, or fewer): the text is what must arrive whole.
      const sent = result.message?.length ?? 0;
      if (result.deltas < n - 1 || sent === 0 || result.deltaChars !== sent)
        throw new Error(
          `ext-events: ${result.deltas} deltas of ${result.deltaChars} characters delivered, ${n} sent (${sent} characters)`,
        );
      return {
        value: n / result.seconds,
        foreign,
        extra: { commits: result.commits, events_per_commit: result.events / result.commits },
      };
    } finally {
      await brain.close();
      await api.stop();
      await removeTemp(home);
    }
  };

  const samples = await interleave("ext-events", opts.reps, { baseline, subject }, WARM_ROUNDS);
  return [
    rateRow(
      {
        id: "ext-events",
        what: "extension host events (stdio JSON-RPC) → Brain → durable log → subscriber",
        unit: "events/s",
        baselineWhat: "same host → pipe → LineSplitter + JSON.parse",
        notes: [
          `${n} events per run, timed from session.prompt() to turn.settled delivered (baseline: harness.run sent to its reply)`,
          "host writes 320 notifications (64 000 B) per write; the host is started once per session and kept",
        ],
      },
      samples,
      { kind: "min-ratio", ratio: 0.6 },
    ),
  ];
}

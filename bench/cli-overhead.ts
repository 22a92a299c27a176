// 10. The CLI harnesses' overhead over each CLI's own stream.
//
// Per delta: a real captured stream of each CLI (src/testing/fixtures/cli-transcripts), repeated to a few MB, is fed in
// 64 KiB chunks through Brain's path (LineSplitter, JSON.parse, the family's parser) and through a baseline that
// only splits and JSON.parses, the least any host must do. The ratio is the parsers' throughput cost; the note
// gives the time Brain adds per line.
//
// Per turn: Claude Code answering a one-line prompt, warm, through Brain (session.prompt() to turn.settled, the
// durable log included) against the same `claude -p` stream-json process driven bare (a user line written to
// the `result` line read), both in the same loopback-only namespace against the fake provider.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Brain } from "../src/core/brain.js";
import { HarnessRegistry } from "../src/core/registry.js";
import { ClaudeCodeFactory } from "../src/harnesses/claude-code/factory.js";
import { STREAM_JSON_ARGS } from "../src/harnesses/claude-code/harness.js";
import { ClaudeStreamParser } from "../src/harnesses/claude-code/parser.js";
import { CliProcess } from "../src/harnesses/cli/child.js";
import { cliEnvironment } from "../src/harnesses/cli/environment.js";
import { locateCli } from "../src/harnesses/cli/locate.js";
import { CodexNotificationMapper } from "../src/harnesses/codex/parser.js";
import { OpencodeEventMapper } from "../src/harnesses/opencode/parser.js";
import { PiEventParser } from "../src/harnesses/pi-cli/parser.js";
import { LineSplitter } from "../src/protocol/ndjson.js";
import { FsSessionStore } from "../src/store/fs/index.js";
import { shellAgent } from "../src/testing/fake-provider/index.js";
import { startSandboxedProvider } from "../src/testing/netns/sandbox.js";
import { BuiltinTools } from "../src/tools/builtin.js";
import { ToolRouter } from "../src/tools/router.js";
import { makeTemp, removeTemp, withTimeout } from "./lib/cleanup.js";
import { type BenchRow, interleave, log, rateRow, type Sample, timed, timeRow } from "./lib/measure.js";
import { median } from "./lib/stats.js";
import type { BenchOptions } from "./options.js";

const FIXTURES = fileURLToPath(new URL("../../src/testing/fixtures/cli-transcripts/", import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: decoded third-party JSON
type Json = any;

interface Stream {
  family: string;
  file: string;
  /** A fresh parser per run, fed one decoded line at a time; returns how many signals it produced. */
  parser(): (line: Json) => number;
}

const STREAMS: Stream[] = [
  {
    family: "claude-code",
    file: "claude/a-stream.jsonl",
    parser: () => {
      const p = new ClaudeStreamParser();
      return (line) => p.handle(line).length;
    },
  },
  {
    family: "codex",
    file: "codex/app-server-a.jsonl",
    parser: () => {
      const m = new CodexNotificationMapper();
      return (line) =>
        typeof line.method === "string" && line.id === undefined
          ? m.handle(line.method, line.params).length
          : 0;
    },
  },
  {
    family: "pi-cli",
    file: "pi/openai-completions-a-rpc.jsonl",
    parser: () => {
      const p = new PiEventParser();
      return (line) => p.handle(line).length;
    },
  },
  {
    family: "opencode",
    file: "opencode/sse-1.jsonl",
    parser: () => {
      const m = new OpencodeEventMapper("ses_dd474357cffeBoXosp62NbmHJ6");
      return (line) => m.handle(line).length;
    },
  },
];

const CHUNK = 64 * 1024;

/** Feeds `data` through a LineSplitter in 64 KiB chunks; `onLine` per line. Returns lines per second. */
function replay(
  data: Buffer,
  onLine: (line: string) => void,
): { rate: number; lines: number; seconds: number } {
  let lines = 0;
  const splitter = new LineSplitter((line) => {
    lines++;
    onLine(line);
  }, 64 << 20);
  const t0 = process.hrtime.bigint();
  for (let at = 0; at < data.length; at += CHUNK) splitter.push(data.subarray(at, at + CHUNK));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { rate: lines / seconds, lines, seconds };
}

async function parserRows(opts: BenchOptions): Promise<BenchRow[]> {
  const targetBytes = (opts.quick ? 4 : 16) << 20;
  const rows: BenchRow[] = [];
  for (const stream of STREAMS) {
    const one = readFileSync(`${FIXTURES}${stream.file}`);
    const data = Buffer.concat(Array.from({ length: Math.ceil(targetBytes / one.length) }, () => one));
    log(
      `cli-overhead: ${stream.family} stream replay, ${(data.length / 1e6).toFixed(1)} MB, ${opts.reps} rounds`,
    );
    const samples = await interleave(`cli ${stream.family}`, opts.reps, {
      baseline: async (): Promise<Sample> => {
        const { foreign, result } = await timed(async () => replay(data, (line) => JSON.parse(line)));
        return { value: result.rate, foreign };
      },
      subject: async (): Promise<Sample> => {
        const handle = stream.parser();
        let signals = 0;
        const { foreign, result } = await timed(async () =>
          replay(data, (line) => {
            signals += handle(JSON.parse(line));
          }),
        );
        return { value: result.rate, foreign, extra: { signals_per_line: signals / result.lines } };
      },
    });
    const row = rateRow(
      {
        id: `cli-parse-${stream.family}`,
        what: `${stream.family}: captured stream → Brain events (per line)`,
        unit: "lines/s",
        baselineWhat: "same bytes → LineSplitter + JSON.parse",
        notes: [`replay of ${stream.file}, ${data.length} bytes per run`],
      },
      samples,
      { kind: "min-ratio", ratio: 0.5 },
    );
    const added = 1e6 / row.subject.median - 1e6 / (row.baseline?.median ?? Number.NaN);
    row.notes.push(`Brain adds ${added.toFixed(2)} µs per line (median runs)`);
    rows.push(row);
  }
  return rows;
}

const TURN_PROMPT = "NOTOOL say hello";

function claudeArgs(sessionId: string): string[] {
  return [...STREAM_JSON_ARGS, "--session-id", sessionId, "--model", "fake-model"];
}

/** `claude -p` stream-json with nothing in between: a user line in, lines read until `result`. */
class BareClaude {
  private readonly child: CliProcess;
  private waiting: (() => void) | undefined;

  constructor(program: string, dir: string, launcher: string[], baseUrl: string) {
    const env = cliEnvironment(dir, {
      CLAUDE_CONFIG_DIR: `${dir}/claude`,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: "sk-bench",
    });
    this.child = new CliProcess({
      label: "bench",
      command: program,
      args: claudeArgs(randomUUID()),
      env,
      cwd: dir,
      launcher,
      onLine: (line) => {
        if (line.startsWith('{"type":"result"')) this.waiting?.();
      },
    });
  }

  turn(text: string): Promise<void> {
    const done = new Promise<void>((resolve) => {
      this.waiting = resolve;
    });
    this.child.write(
      `${JSON.stringify({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" })}\n`,
    );
    return withTimeout(done, 120_000, "bare claude turn");
  }

  stop(): Promise<void> {
    return this.child.stop();
  }
}

async function turnRow(opts: BenchOptions): Promise<BenchRow[]> {
  const program = locateCli("claude");
  if (!program) {
    log("cli-overhead: claude not installed; per-turn row skipped");
    return [];
  }
  const turns = opts.quick ? 2 : 3;
  const sandbox = await startSandboxedProvider();
  sandbox.provider.setFallback(shellAgent());
  log(`cli-overhead: claude-code turns, ${turns} warm turns per run, ${opts.reps} rounds`);
  const timeTurns = async (turn: () => Promise<void>): Promise<{ ms: number; foreign: number }> => {
    await turn(); // warm: the process is up and has made its first request
    const each: number[] = [];
    const foreign: number[] = [];
    for (let i = 0; i < turns; i++) {
      const t = await timed(turn);
      each.push(t.seconds * 1000);
      foreign.push(t.foreign);
    }
    return { ms: median(each), foreign: median(foreign) };
  };
  try {
    const samples = await interleave("cli claude turn", opts.reps, {
      baseline: async (): Promise<Sample> => {
        const dir = await makeTemp("cli-bare");
        const bare = new BareClaude(program, dir, sandbox.launcher, sandbox.provider.url);
        try {
          const { ms, foreign } = await timeTurns(() => bare.turn(TURN_PROMPT));
          return { value: ms, foreign };
        } finally {
          await bare.stop();
          await removeTemp(dir);
        }
      },
      subject: async (): Promise<Sample> => {
        const home = await makeTemp("cli-brain");
        const brain = new Brain({
          store: new FsSessionStore(home),
          harnesses: new HarnessRegistry([new ClaudeCodeFactory({ launcher: sandbox.launcher })]),
          tools: new ToolRouter([new BuiltinTools()]),
          credentials: () => ({ base_url: sandbox.provider.url, api_key: "sk-bench" }),
        });
        try {
          const session = await brain.create({ harness: "claude-code", config: { model: "fake-model" } });
          const { ms, foreign } = await timeTurns(async () => {
            const turn = await session.prompt(TURN_PROMPT);
            const outcome = await withTimeout(turn.settled, 120_000, "claude-code turn");
            if (outcome.status !== "completed")
              throw new Error(`claude-code turn ${outcome.status}: ${outcome.error?.message}`);
          });
          return { value: ms, foreign };
        } finally {
          await brain.close();
          await removeTemp(home);
        }
      },
    });
    const row = timeRow(
      {
        id: "cli-turn-claude-code",
        what: "claude-code: one warm turn (prompt → settled)",
        unit: "ms",
        baselineWhat: "same claude -p stream-json process driven bare (user line → result line)",
        notes: [
          `median of ${turns} warm turns per run; one model request each (fake provider, loopback namespace)`,
        ],
      },
      samples,
      { kind: "none" },
    );
    const added = row.subject.median - (row.baseline?.median ?? Number.NaN);
    row.notes.push(`Brain adds ${added.toFixed(1)} ms per turn (difference of medians)`);
    return [row];
  } finally {
    await sandbox.close();
  }
}

export async function cliOverheadBench(opts: BenchOptions): Promise<BenchRow[]> {
  return [...(await parserRows(opts)), ...(await turnRow(opts))];
}

// The Dev Container CLI and Docker, as the devcontainer harness uses them: `devcontainer up
// --workspace-folder DIR` (its last JSON line says the outcome and the container id), `devcontainer exec
// --workspace-folder DIR CMD ARGS…` (built by the exec shim), `docker stop ID`. Both programs must be there
// and Docker must answer; each failure says which and what to do.
import { execFile, spawn } from "node:child_process";
import { HarnessError } from "../../core/harness.js";
import { tailOf } from "../../core/redact.js";
import { locateCli } from "../cli/locate.js";
import { DockerStopped, explain } from "../http/docker-cli.js";
import { findMissing } from "../process/command.js";

export interface UpResult {
  outcome: string;
  containerId?: string;
  remoteUser?: string;
  remoteWorkspaceFolder?: string;
  message?: string;
  description?: string;
}

/** What bounds each lifecycle command `up` runs, and how its error names the command and that bound. */
export interface LifecycleBound {
  ms: number;
  /** The setting that sets ms, as the error names it. */
  setting: string;
  /** The `nth` command of `hook`, as the error quotes it; undefined when unknown. */
  command: (hook: string, nth: number) => string | undefined;
}

export interface DevcontainerPrograms {
  /** `devcontainer` (npm @devcontainers/cli) or a path. */
  devcontainer: string;
  docker: string;
}

/** The Dev Container CLI the project pins (its node_modules/.bin), else `devcontainer` on PATH; docker on PATH. */
export function defaultPrograms(): DevcontainerPrograms {
  return { devcontainer: locateCli("devcontainer") ?? "devcontainer", docker: "docker" };
}

export function upArgs(workspaceFolder: string): string[] {
  return ["up", "--workspace-folder", workspaceFolder];
}

export function execArgs(workspaceFolder: string, command: string, args: string[]): string[] {
  return ["exec", "--workspace-folder", workspaceFolder, command, ...args];
}

/** Of what `up` printed (its whole log, when no outcome line says why it failed), an error quotes the end. */
const QUOTED_OUTPUT_CHARS = 2000;

function run(
  program: string,
  args: string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
) {
  return new Promise<{ ok: boolean; stdout: string; stderr: string; error?: string; timedOut?: boolean }>(
    (resolve) => {
      const options = { timeout: timeoutMs, env, maxBuffer: 16 << 20, ...(signal ? { signal } : {}) };
      execFile(program, args, options, (err, stdout, stderr) => {
        // Killed by the timeout (not for too much output, which sets a string code).
        const timedOut = !!err?.killed && typeof err.code !== "string";
        resolve({ ok: !err, stdout, stderr, ...(err ? { error: err.message, timedOut } : {}) });
      });
    },
  );
}

/** How long a killed `up`'s process group may take to be gone before its sweep runs all the same. */
const GROUP_GONE_MS = 10_000;

/** Of each of `up`'s streams, the end kept (its outcome line is last; its log can be long). */
const MAX_KEPT_CHARS = 16 << 20;

function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch {
    return true;
  }
}

/** How `up` logs the start of a lifecycle command (`Running the postCreateCommand from devcontainer.json...`). */
const HOOK_STARTED = /Running the (\w+) from /g;

/** How `up` logs one that failed (`postCreateCommand from devcontainer.json failed with exit code 3.`). */
const HOOK_FAILED = /(\w+) from \S+ failed with exit code (\d+)/;

/**
 * What the lifecycle command `up` ran last printed: its log from the line after its start to the line saying it
 * failed, without `up`'s timestamps. The stack trace `up` prints after is its own, not the command's.
 */
export function hookOutput(stderr: string): string {
  const start = [...stderr.matchAll(HOOK_STARTED)].at(-1);
  if (!start) return "";
  const after = stderr.slice(start.index + start[0].length);
  const from = after.indexOf("\n") + 1;
  const failed = after.search(HOOK_FAILED);
  const until = failed === -1 ? after.length : after.lastIndexOf("\n", failed) + 1;
  // The command runs on a terminal: its lines end in CRLF.
  return after
    .slice(from, Math.max(from, until))
    .replace(/\r\n?/g, "\n")
    .replace(/^\[[^\]\n]*\] /gm, "")
    .trim();
}

/** A lifecycle command `up` was running: its hook and which of that hook's commands (from 1). */
export interface RunningHook {
  hook: string;
  nth: number;
}

interface GroupResult {
  ok: boolean;
  stdout: string;
  stderr: string;
  error?: string;
  timedOut?: boolean;
  /** The lifecycle command running when it was stopped. */
  hook?: RunningHook;
  /** Stopped because that command ran longer than hookMs. */
  hookTimedOut?: boolean;
  /** Stopped by the caller's signal. */
  aborted?: boolean;
}

/**
 * `devcontainer up` in its own process group: the CLI runs `docker` children (a `docker run` among them) that a
 * kill of the CLI alone would leave running, to create the container after the caller swept for it. On its
 * timeout or failure the whole group is killed, and this resolves once the group is gone (or after GROUP_GONE_MS).
 * Each lifecycle command it logs the start of has hookMs of its own: one that hangs would otherwise hold `up` for
 * all of timeoutMs, which is sized for pulling and building an image. `signal` stops it the same way.
 */
function runGroup(
  program: string,
  args: string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
  hookMs = timeoutMs,
  signal?: AbortSignal,
) {
  return new Promise<GroupResult>((resolve) => {
    const child = spawn(program, args, { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const out = { stdout: "", stderr: "" };
    // The end of each is what an error quotes; a runaway log is not kept whole.
    const keep = (key: "stdout" | "stderr") => (chunk: Buffer) => {
      out[key] = (out[key] + chunk.toString("utf8")).slice(-MAX_KEPT_CHARS);
    };
    child.stdout.on("data", keep("stdout"));
    child.stderr.on("data", keep("stderr"));
    let timedOut = false;
    let hook: RunningHook | undefined;
    let hookTimedOut = false;
    let hookTimer: NodeJS.Timeout | undefined;
    const started = new Map<string, number>();
    // A log line may arrive in two chunks: what follows the last start seen is looked at again.
    let unscanned = "";
    child.stderr.on("data", (chunk: Buffer) => {
      unscanned += chunk.toString("utf8");
      let end = Math.max(0, unscanned.length - 200);
      for (const match of unscanned.matchAll(HOOK_STARTED)) {
        const name = match[1]!;
        started.set(name, (started.get(name) ?? 0) + 1);
        hook = { hook: name, nth: started.get(name)! };
        end = match.index + match[0].length;
        clearTimeout(hookTimer);
        hookTimer = setTimeout(() => {
          hookTimedOut = true;
          killGroup();
        }, hookMs);
      }
      unscanned = unscanned.slice(end);
    });
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    let aborted = false;
    const abort = () => {
      aborted = true;
      killGroup();
    };
    signal?.addEventListener("abort", abort, { once: true });
    if (signal?.aborted) abort();
    const settle = async (error?: string) => {
      clearTimeout(timer);
      clearTimeout(hookTimer);
      signal?.removeEventListener("abort", abort);
      if (error !== undefined && child.pid !== undefined) {
        killGroup();
        const deadline = Date.now() + GROUP_GONE_MS;
        while (!groupGone(child.pid) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      resolve({
        ok: error === undefined,
        ...out,
        ...(error !== undefined ? { error, timedOut, hookTimedOut, aborted, ...(hook ? { hook } : {}) } : {}),
      });
    };
    child.on("error", (err) => void settle(err.message));
    child.on("close", (code, signal) => {
      if (aborted) void settle("stopped");
      else if (timedOut) void settle(`timed out after ${timeoutMs / 1000} s`);
      else if (hookTimedOut) void settle(`${hook?.hook} timed out after ${hookMs / 1000} s`);
      else if (code === 0) void settle();
      else void settle(`${program} exited with ${signal ?? `code ${code}`}`);
    });
  });
}

/** The last JSON line of `devcontainer up` that says an outcome. */
export function parseUpOutput(stdout: string): UpResult | undefined {
  const lines = stdout.trim().split("\n").reverse();
  for (const line of lines) {
    const text = line.trim();
    if (!text.startsWith("{")) continue;
    try {
      const value = JSON.parse(text) as UpResult;
      if (value.outcome || value.containerId) return value;
    } catch {
      // a log line that looks like JSON but is not: keep looking
    }
  }
  return undefined;
}

export class DevcontainerCli {
  constructor(
    readonly programs: DevcontainerPrograms = defaultPrograms(),
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /**
   * Both CLIs present and the Docker daemon answering, or a HarnessError that says what is missing; DockerStopped
   * when `signal` (the session's close) stopped `docker info`.
   */
  async assertReady(harness: string, timeoutMs = 20_000, signal?: AbortSignal): Promise<void> {
    const path = this.env.PATH ?? "";
    const noCli = findMissing(this.programs.devcontainer, [], process.cwd(), path);
    if (noCli) {
      throw new HarnessError(
        "brain_error",
        `harness "${harness}" needs the Dev Container CLI: ${noCli.replace("runner program", "program")} (npm install @devcontainers/cli in Brain's install, or npm install -g @devcontainers/cli)`,
      );
    }
    const noDocker = findMissing(this.programs.docker, [], process.cwd(), path);
    if (noDocker) {
      throw new HarnessError(
        "brain_error",
        `harness "${harness}" needs Docker: ${noDocker.replace("runner program", "program")} (install Docker, https://docs.docker.com/get-docker/)`,
      );
    }
    const info = await run(
      this.programs.docker,
      ["info", "--format", "{{.ServerVersion}}"],
      timeoutMs,
      this.env,
      signal,
    );
    if (signal?.aborted) throw new DockerStopped("docker info was stopped", info.stderr, "docker info");
    if (!info.ok) {
      const detail = (info.stderr || info.stdout || info.error || "").trim();
      throw new HarnessError(
        "brain_error",
        `harness "${harness}": ${explain(detail || "docker info failed")}`,
      );
    }
  }

  /** `stopped`: aborted when the session closed while `up` ran; its error then says so. */
  async up(
    workspaceFolder: string,
    timeoutMs: number,
    lifecycle?: LifecycleBound,
    stopped?: AbortSignal,
  ): Promise<UpResult & { containerId: string }> {
    const result = await runGroup(
      this.programs.devcontainer,
      upArgs(workspaceFolder),
      timeoutMs,
      this.env,
      lifecycle?.ms,
      stopped,
    );
    const parsed = parseUpOutput(result.stdout);
    if (parsed?.outcome === "success" && parsed.containerId)
      return parsed as UpResult & { containerId: string };
    const printed = tailOf((result.stderr || result.stdout).trim(), QUOTED_OUTPUT_CHARS);
    const command = `devcontainer up --workspace-folder ${workspaceFolder}`;
    if (result.aborted) {
      throw new HarnessError(
        "brain_error",
        `${command} was stopped, its container removed: the session was closed while its dev container started`,
      );
    }
    if (result.hookTimedOut && result.hook && lifecycle) {
      const { hook, nth } = result.hook;
      const what = lifecycle.command(hook, nth);
      throw new HarnessError(
        "brain_error",
        `${command}: the image's ${hook}${what ? ` ${what}` : ""} (from its devcontainer.metadata label) did not finish within ${lifecycle.ms / 1000} s and was stopped, its container removed; make the command finish sooner (or not wait on input), use an image without it, or raise ${lifecycle.setting}${printed ? `; its output ended with: ${printed}` : ""}`,
      );
    }
    if (result.timedOut) {
      // Its log is progress, not a reason: what was cut short is said first.
      throw new HarnessError(
        "brain_error",
        `${command} did not finish within ${timeoutMs / 1000} s and was stopped (pulling or building the image can take that long: pull or build it beforehand)${printed ? `; its output ended with: ${printed}` : ""}`,
      );
    }
    const failed = HOOK_FAILED.exec(result.stderr);
    if (parsed?.outcome === "error" && result.hook && lifecycle && failed?.[1] === result.hook.hook) {
      const { hook, nth } = result.hook;
      const what = lifecycle.command(hook, nth);
      const output = tailOf(hookOutput(result.stderr), QUOTED_OUTPUT_CHARS);
      throw new HarnessError(
        "brain_error",
        `${command}: the image's ${hook}${what ? ` ${what}` : ""} (from its devcontainer.metadata label) failed with exit code ${failed[2]}, its container removed; make the command succeed (a network: "none" container, the default, reaches no registry), or use an image without it; ${output ? `its output ended with: ${output}` : "it printed nothing"}`,
      );
    }
    const why = parsed?.message ?? parsed?.description ?? (printed || (result.error ?? "no output").trim());
    throw new HarnessError("brain_error", `${command} failed: ${explain(tailOf(why, QUOTED_OUTPUT_CHARS))}`);
  }
}

// The Dev Container CLI and Docker, as the devcontainer harness uses them: `devcontainer up
// --workspace-folder DIR` (its last JSON line says the outcome and the container id), `devcontainer exec
// --workspace-folder DIR CMD ARGS…` (built by the exec shim), `docker stop ID`. Both programs must be there
// and Docker must answer; each failure says which and what to do.
import { execFile, spawn } from "node:child_process";
import { HarnessError } from "../../core/harness.js";
import { tailOf } from "../../core/redact.js";
import { locateCli } from "../cli/locate.js";
import { explain } from "../http/docker-cli.js";
import { findMissing } from "../process/command.js";

export interface UpResult {
  outcome: string;
  containerId?: string;
  remoteUser?: string;
  remoteWorkspaceFolder?: string;
  message?: string;
  description?: string;
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

function run(program: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv) {
  return new Promise<{ ok: boolean; stdout: string; stderr: string; error?: string; timedOut?: boolean }>(
    (resolve) => {
      execFile(program, args, { timeout: timeoutMs, env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
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

/**
 * `devcontainer up` in its own process group: the CLI runs `docker` children (a `docker run` among them) that a
 * kill of the CLI alone would leave running, to create the container after the caller swept for it. On its
 * timeout or failure the whole group is killed, and this resolves once the group is gone (or after GROUP_GONE_MS).
 */
function runGroup(program: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv) {
  return new Promise<{ ok: boolean; stdout: string; stderr: string; error?: string; timedOut?: boolean }>(
    (resolve) => {
      const child = spawn(program, args, { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
      const out = { stdout: "", stderr: "" };
      // The end of each is what an error quotes; a runaway log is not kept whole.
      const keep = (key: "stdout" | "stderr") => (chunk: Buffer) => {
        out[key] = (out[key] + chunk.toString("utf8")).slice(-MAX_KEPT_CHARS);
      };
      child.stdout.on("data", keep("stdout"));
      child.stderr.on("data", keep("stderr"));
      let timedOut = false;
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
      const settle = async (error?: string) => {
        clearTimeout(timer);
        if (error !== undefined && child.pid !== undefined) {
          killGroup();
          const deadline = Date.now() + GROUP_GONE_MS;
          while (!groupGone(child.pid) && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 50));
          }
        }
        resolve({ ok: error === undefined, ...out, ...(error !== undefined ? { error, timedOut } : {}) });
      };
      child.on("error", (err) => void settle(err.message));
      child.on("close", (code, signal) => {
        if (timedOut) void settle(`timed out after ${timeoutMs / 1000} s`);
        else if (code === 0) void settle();
        else void settle(`${program} exited with ${signal ?? `code ${code}`}`);
      });
    },
  );
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

  /** Both CLIs present and the Docker daemon answering, or a HarnessError that says what is missing. */
  async assertReady(harness: string, timeoutMs = 20_000): Promise<void> {
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
    );
    if (!info.ok) {
      const detail = (info.stderr || info.stdout || info.error || "").trim();
      throw new HarnessError(
        "brain_error",
        `harness "${harness}": ${explain(detail || "docker info failed")}`,
      );
    }
  }

  async up(workspaceFolder: string, timeoutMs: number): Promise<UpResult & { containerId: string }> {
    const result = await runGroup(this.programs.devcontainer, upArgs(workspaceFolder), timeoutMs, this.env);
    const parsed = parseUpOutput(result.stdout);
    if (parsed?.outcome === "success" && parsed.containerId)
      return parsed as UpResult & { containerId: string };
    const printed = tailOf((result.stderr || result.stdout).trim(), QUOTED_OUTPUT_CHARS);
    const command = `devcontainer up --workspace-folder ${workspaceFolder}`;
    if (result.timedOut) {
      // Its log is progress, not a reason: what was cut short is said first.
      throw new HarnessError(
        "brain_error",
        `${command} did not finish within ${timeoutMs / 1000} s and was stopped (pulling or building the image can take that long: pull or build it beforehand)${printed ? `; its output ended with: ${printed}` : ""}`,
      );
    }
    const why = parsed?.message ?? parsed?.description ?? (printed || (result.error ?? "no output").trim());
    throw new HarnessError("brain_error", `${command} failed: ${explain(tailOf(why, QUOTED_OUTPUT_CHARS))}`);
  }
}

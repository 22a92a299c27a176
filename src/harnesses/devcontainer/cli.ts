// The Dev Container CLI and Docker, as the devcontainer harness uses them: `devcontainer up
// --workspace-folder DIR` (its last JSON line says the outcome and the container id), `devcontainer exec
// --workspace-folder DIR CMD ARGS…` (built by the exec shim), `docker stop ID`. Both programs must be there
// and Docker must answer; each failure says which and what to do.
import { execFile } from "node:child_process";
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
    const result = await run(this.programs.devcontainer, upArgs(workspaceFolder), timeoutMs, this.env);
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

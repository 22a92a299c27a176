// A `network: "none"` container's way to Brain's HITL: nui's REST API (api-server.ts) served for this one session
// on a Unix socket in a private directory, which the container's network-namespace bridge (container-net.ts)
// makes answer on the container's own 127.0.0.1. The container is told where with NUI_API_URL, whose path starts
// with a secret of this session's, so neither another session nor anything that guessed the port can use it. A
// permission or question the agent asks there reaches Brain's clients through the session's HitlDesk, the same
// plumbing an extension host's requests take.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HarnessOptions } from "../../core/harness.js";
import { NuiApiServer } from "../nui/api-server.js";
import { HitlDesk, type HitlRun } from "../nui/hitl-desk.js";

/** The container port NUI_API_URL names, unless the agent's port or a bridged host port has it. */
export const CONTAINER_API_PORT = 8091;

export class ContainerHitl {
  private constructor(
    readonly desk: HitlDesk,
    /** The container's 127.0.0.1 port, and the socket the bridge joins it to. */
    readonly port: number,
    readonly socket: string,
    /** The container's NUI_API_URL: a secret; never logged, never in an error. */
    readonly url: string,
    /** The secret path segment of `url`. */
    readonly token: string,
    private readonly server: NuiApiServer,
    private readonly dir: string,
  ) {}

  /** Listening before the container starts, so an agent that asks at once finds it. */
  static async open(
    options: Pick<HarnessOptions, "sessionId" | "ask" | "permit">,
    runFor: (runId: string | undefined) => HitlRun | undefined,
    taken: number[],
  ): Promise<ContainerHitl> {
    let port = CONTAINER_API_PORT;
    while (taken.includes(port)) port++;
    const dir = mkdtempSync(join(tmpdir(), "brain-hitl-"));
    chmodSync(dir, 0o700);
    const socket = join(dir, "nui-api.sock");
    const server = new NuiApiServer({ socketPath: socket });
    let token: string;
    try {
      ({ token } = await server.retain());
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    const desk = new HitlDesk(options.sessionId, options, runFor);
    server.addDesk(desk);
    return new ContainerHitl(desk, port, socket, `http://127.0.0.1:${port}/${token}`, token, server, dir);
  }

  async close(): Promise<void> {
    await this.server.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

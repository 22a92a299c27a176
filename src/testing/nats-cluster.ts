// A 3-node NATS cluster with JetStream on loopback, each node in its own directory under one temp dir, for
// tests and benchmarks. The server binary comes from scripts/ensure-nats.mjs (Debian's nats-server, installed
// when missing). Nodes can be killed and started again to test failover.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { freePort } from "../core/free-port.js";
import { sleep } from "../core/sleep.js";

export interface NatsCluster {
  /** `nats://127.0.0.1:<port>` of each node, for a client that may fail over between them. */
  readonly servers: string[];
  readonly dir: string;
  /** Connects a client to all the nodes. */
  connect(name?: string): Promise<NatsConnection>;
  /** SIGKILLs node `i` (0-based). */
  kill(i: number): void;
  /** Starts node `i` again on its ports and directory (after kill). */
  start(i: number): void;
  /** Kills every node and removes the directory. */
  stop(): Promise<void>;
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** scripts/ensure-nats.mjs, from src/testing (vitest) or dist/src/testing (benchmarks). */
const INSTALLER = [join(HERE, "..", "..", "scripts"), join(HERE, "..", "..", "..", "scripts")]
  .map((dir) => join(dir, "ensure-nats.mjs"))
  .find((p) => existsSync(p));

/** The nats-server binary, installing Debian's package when it is missing (once per machine). */
export function natsServerPath(): string {
  // The installer is a plain script (it must run before anything is built, from .ci/run too).
  const script = INSTALLER ?? join(process.cwd(), "scripts", "ensure-nats.mjs");
  return execFileSync(process.execPath, [script], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
}

/** A node that exited while the cluster was starting: its ports, chosen free a moment before, may have been taken. */
class NodeExited extends Error {}

export interface NatsClusterOptions {
  /** How many nodes (default 3). */
  nodes?: number;
  /** Each server's max_payload (bytes), when not NATS's default 1 MB. */
  maxPayload?: number;
  /** Each server's JetStream file storage (nats-server's max_file_store, e.g. "2MB"), when not 1GB. */
  maxFileStore?: string;
}

export async function startNatsCluster(options: NatsClusterOptions = {}): Promise<NatsCluster> {
  const count = options.nodes ?? 3;
  const binary = natsServerPath();
  const settings = options.maxPayload !== undefined ? `max_payload: ${options.maxPayload}\n` : "";
  const fileStore = options.maxFileStore ?? "1GB";
  try {
    return await startCluster(count, binary, settings, fileStore);
  } catch (err) {
    // Once more on fresh ports: another test may bind a port between freePort() and the node's own bind.
    if (!(err instanceof NodeExited)) throw err;
    return startCluster(count, binary, settings, fileStore);
  }
}

async function startCluster(
  count: number,
  binary: string,
  settings: string,
  fileStore: string,
): Promise<NatsCluster> {
  const dir = mkdtempSync(join(tmpdir(), "brain-nats-"));
  const ports: number[] = [];
  const routes: number[] = [];
  for (let i = 0; i < count; i++) {
    ports.push(await freePort());
    routes.push(await freePort());
  }
  const servers = ports.map((p) => `nats://127.0.0.1:${p}`);
  const procs: (ChildProcess | undefined)[] = [];
  const configs = ports.map((port, i) => {
    const nodeDir = join(dir, `n${i + 1}`);
    mkdirSync(nodeDir, { recursive: true });
    const file = join(nodeDir, "nats.conf");
    const cluster =
      count > 1
        ? `cluster {\n  name: brain\n  listen: 127.0.0.1:${routes[i]}\n  routes: [${routes
            .filter((_, j) => j !== i)
            .map((r) => `nats-route://127.0.0.1:${r}`)
            .join(", ")}]\n}\n`
        : "";
    writeFileSync(
      file,
      `server_name: n${i + 1}\nlisten: 127.0.0.1:${port}\n${settings}` +
        `jetstream {\n  store_dir: "${join(nodeDir, "js")}"\n  max_memory_store: 64MB\n  max_file_store: ${fileStore}\n}\n` +
        cluster,
    );
    return { file, log: join(nodeDir, "server.log") };
  });

  const start = (i: number) => {
    const config = configs[i];
    if (!config) throw new Error(`no NATS node ${i}: the cluster has ${count}`);
    if (procs[i] && procs[i]!.exitCode === null && procs[i]!.signalCode === null) return;
    procs[i] = spawn(binary, ["-c", config.file, "-l", config.log], { stdio: "ignore" });
  };
  const kill = (i: number) => {
    procs[i]?.kill("SIGKILL");
  };
  for (let i = 0; i < count; i++) start(i);

  const cluster: NatsCluster = {
    servers,
    dir,
    connect: (name) =>
      connect({ servers, name: name ?? "brain-test", maxReconnectAttempts: -1, reconnectTimeWait: 100 }),
    kill,
    start,
    async stop() {
      const exits = procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (!p || p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once("exit", () => resolve());
            p.kill("SIGKILL");
          }),
      );
      await Promise.all(exits);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const exited = () => {
    const i = procs.findIndex((p) => p && (p.exitCode !== null || p.signalCode !== null));
    if (i < 0) return undefined;
    const log = existsSync(configs[i]!.log) ? readFileSync(configs[i]!.log, "utf8").slice(-600) : "";
    return `node n${i + 1} exited (${procs[i]!.exitCode ?? procs[i]!.signalCode}): ${log}`;
  };
  try {
    await waitForJetStream(cluster, count, exited);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/** JetStream answers only once the cluster has elected its meta leader. */
async function waitForJetStream(
  cluster: NatsCluster,
  nodes: number,
  exited: () => string | undefined,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const gone = exited();
    if (gone) throw new NodeExited(`NATS cluster in ${cluster.dir} did not start: ${gone}`);
    let nc: NatsConnection | undefined;
    try {
      nc = await cluster.connect("brain-test-probe");
      const jsm = await jetstreamManager(nc, { timeout: 5000 });
      // Ready once a stream with a replica on every node can be placed: a meta leader alone is not enough.
      const probe = `probe_${process.pid}_${Date.now()}`;
      await jsm.streams.add({
        name: probe,
        subjects: [`${probe}.x`],
        num_replicas: nodes,
        storage: StorageType.Memory,
      });
      await jsm.streams.delete(probe);
      return;
    } catch (err) {
      last = err;
      await sleep(200);
    } finally {
      await nc?.close().catch(() => {});
    }
  }
  throw new Error(
    `NATS cluster in ${cluster.dir} did not offer JetStream within ${timeoutMs} ms: ${String(last)}`,
  );
}

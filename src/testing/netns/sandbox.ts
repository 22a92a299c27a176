// A fake provider that only a sandboxed CLI can reach: the provider listens on 127.0.0.1 in this process (so a
// test scripts it and reads its request log directly) and on a Unix socket; `launcher` runs a command in a new
// network namespace whose only interface is its own loopback, where a relay on the provider's port leads to
// that socket. A CLI run behind `launcher` can reach the fake provider and no other address.
import { existsSync, mkdirSync, mkdtempSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { exposeOnUnixSocket, listenRelay, type Relay } from "../../harnesses/http/socket-relay.js";
import { type FakeProvider, type StartOptions, startFakeProvider } from "../fake-provider/index.js";

const here = dirname(fileURLToPath(import.meta.url));
/** The compiled launcher; from source (vitest) it is the built copy under dist/. */
export const LAUNCHER_JS = here.includes(`${sep}dist${sep}`)
  ? join(here, "launcher.js")
  : resolve(here, "../../../dist/src/testing/netns/launcher.js");

export interface SandboxedProvider {
  provider: FakeProvider;
  /** Put in front of a command to run it in the loopback-only namespace. */
  launcher: string[];
  close(): Promise<void>;
}

/** `unshare -n` as root; an unprivileged user maps itself to root in a new user namespace first (`-r`). */
export function unshareWords(): string[] {
  return process.getuid?.() === 0 ? ["unshare", "-n"] : ["unshare", "-r", "-n"];
}

export async function startSandboxedProvider(opts: StartOptions = {}): Promise<SandboxedProvider> {
  const provider = await startFakeProvider(opts);
  const port = new URL(provider.url).port;
  const dir = mkdtempSync(join(tmpdir(), "brain-netns-"));
  const socket = join(dir, "provider.sock");
  let server: Relay;
  try {
    server = await exposeOnUnixSocket(Number(port), socket);
  } catch (err) {
    await provider.close();
    throw err;
  }
  // Servers the sandboxed CLI starts come back out as <dir>/published/<port>.sock; serve each on the host's
  // 127.0.0.1:<port>, so the harness reaches them at the address the CLI was told to listen on.
  const publishDir = join(dir, "published");
  mkdirSync(publishDir);
  const published: Promise<Relay | undefined>[] = [];
  const watcher = watch(publishDir, (_kind, name) => {
    const match = name ? /^(\d+)\.sock$/.exec(name) : null;
    if (!match || !existsSync(join(publishDir, name!))) return;
    const port = Number(match[1]);
    // Said, not swallowed: the server's client would otherwise wait out its whole start timeout for nothing.
    const failed = (err: Error) => {
      process.stderr.write(`netns sandbox: cannot publish port ${port} on the host: ${err.message}\n`);
      return undefined;
    };
    published.push(listenRelay(port, join(publishDir, name!)).catch(failed));
  });
  // Host ports the sandboxed CLI is told of (Brain's credential proxy) come in the other way: the launcher asks
  // for <port>.want in inwardDir, and the host's 127.0.0.1:<port> is exposed as <port>.sock beside it.
  const inwardDir = join(dir, "inward");
  mkdirSync(inwardDir);
  const exposed = new Set<string>();
  const inward = watch(inwardDir, (_kind, name) => {
    const port = name ? /^(\d+)\.want$/.exec(name)?.[1] : undefined;
    if (!port || exposed.has(port)) return;
    exposed.add(port);
    published.push(exposeOnUnixSocket(Number(port), join(inwardDir, `${port}.sock`)).catch(() => undefined));
  });
  const launcher = [
    ...unshareWords(),
    process.execPath,
    LAUNCHER_JS,
    "--port",
    port,
    "--socket",
    socket,
    "--publish-dir",
    publishDir,
    "--inward-dir",
    inwardDir,
    "--",
  ];
  return {
    provider,
    launcher,
    async close() {
      watcher.close();
      inward.close();
      await Promise.all(published.map(async (relay) => (await relay)?.close()));
      await server.close();
      await provider.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

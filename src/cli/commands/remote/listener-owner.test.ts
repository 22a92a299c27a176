// The admin token of tokens.json goes only to a loopback listener of this user: a port another user bound while
// the daemon was down gets nothing.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadOrCreateTokens } from "../../../server/auth/tokens.js";
import { UsageError } from "../../args.js";
import { connect, serverToken } from "./connect.js";
import { foreignListener, listenerUids } from "./listener-owner.js";

const asRoot = process.getuid?.() === 0;

/**
 * A loopback HTTP listener run as `uid` (on `port`, or a free one); resolves with its port, the Authorization
 * headers it was sent so far, and its stop, once it listens.
 */
function listenerOf(uid: number, port = 0): Promise<{ port: number; heard: () => string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `const s=require('http').createServer((q,r)=>{console.log('GOT '+q.headers.authorization);r.end()});s.listen(${port},'127.0.0.1',()=>console.log(s.address().port))`,
    ],
    { uid, gid: uid, cwd: "/", stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout.once("data", (chunk: Buffer) => {
      child.stdout.on("data", (more: Buffer) => {
        out += String(more);
      });
      resolve({ port: Number(String(chunk).trim()), heard: () => out, stop: () => child.kill("SIGKILL") });
    });
  });
}

describe("the listener the admin token would go to", () => {
  it("is ours: nothing to refuse", async () => {
    const server = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as { port: number };
    try {
      expect(listenerUids(port)).toContain(process.getuid!());
      expect(foreignListener(new URL(`http://127.0.0.1:${port}`))).toBeUndefined();
    } finally {
      server.close();
    }
  });

  it.runIf(asRoot)(
    "is another user's: the token of tokens.json is not sent, and the error says why",
    async () => {
      const nobody = await listenerOf(65534);
      const home = mkdtempSync(join(tmpdir(), "brain-squat-"));
      try {
        loadOrCreateTokens(home);
        const url = `http://127.0.0.1:${nobody.port}`;
        expect(foreignListener(new URL(url))).toContain("another user's (uid 65534)");
        expect(() => serverToken(undefined, url, { BRAIN_HOME: home })).toThrow(UsageError);
        expect(() => serverToken(undefined, url, { BRAIN_HOME: home })).toThrow(
          /uid 65534.*--token or \$BRAIN_TOKEN/,
        );
        // A token given explicitly is the person's choice.
        expect(serverToken("given", url, { BRAIN_HOME: home })).toBe("given");
      } finally {
        nobody.stop();
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  it.runIf(asRoot)(
    "is asked again before each request: a port another user took while the daemon was down gets nothing",
    async () => {
      const ours = createHttpServer((_req, res) => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ tenant: "default", role: "controller", auth: true }));
      }).listen(0, "127.0.0.1");
      await new Promise((resolve) => ours.once("listening", resolve));
      const { port } = ours.address() as { port: number };
      const home = mkdtempSync(join(tmpdir(), "brain-squat-"));
      const admin = loadOrCreateTokens(home).file.tokens[0]!.token;
      const client = connect({ server: `http://127.0.0.1:${port}` }, { BRAIN_HOME: home });
      expect((await client.whoami()).tenant).toBe("default");
      ours.closeAllConnections();
      await new Promise((resolve) => ours.close(resolve));
      const nobody = await listenerOf(65534, port);
      try {
        await expect(client.whoami()).rejects.toThrow(/another user's \(uid 65534\)/);
        await expect(client.events("s1").next()).rejects.toThrow(/another user's \(uid 65534\)/);
        // Had either been sent, the listener would have printed it by the time it answered.
        expect(nobody.heard()).not.toContain(admin);
      } finally {
        nobody.stop();
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  it.runIf(asRoot)(
    "is asked again before a retry: a port another user took while the daemon that held the request was down gets nothing",
    async () => {
      // Our daemon takes a read, goes away without answering, and another user's listener takes its port.
      let nobody: Awaited<ReturnType<typeof listenerOf>> | undefined;
      const ours = createServer((socket) => {
        socket.once("data", async () => {
          ours.close();
          nobody = await listenerOf(65534, port);
          socket.resetAndDestroy();
        });
      }).listen(0, "127.0.0.1");
      await new Promise((resolve) => ours.once("listening", resolve));
      const { port } = ours.address() as { port: number };
      const home = mkdtempSync(join(tmpdir(), "brain-squat-"));
      const admin = loadOrCreateTokens(home).file.tokens[0]!.token;
      const client = connect({ server: `http://127.0.0.1:${port}` }, { BRAIN_HOME: home });
      try {
        await expect(client.whoami()).rejects.toThrow(/another user's \(uid 65534\)/);
        expect(nobody!.heard()).not.toContain(admin);
      } finally {
        nobody?.stop();
        rmSync(home, { recursive: true, force: true });
      }
    },
  );
});

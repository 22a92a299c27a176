// `brain acp --server` in front of a daemon of another Brain version: one that lacks a route the front door calls
// is refused at start, naming both versions and what to do, not found out at the first prompt mid-session.
import { spawn } from "node:child_process";
import { createServer, request } from "node:http";
import { join } from "node:path";
import { expect, it } from "vitest";
import { installVersion } from "../core/install-root.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

/** `brain acp --server URL`, its editor gone at once: its exit code and what it wrote to stderr. */
async function acpAgainst(url: string): Promise<{ code: number | null; stderr: string }> {
  const bin = join(import.meta.dirname, "../../bin/brain.js");
  const child = spawn(process.execPath, [bin, "acp", "--server", url, "--token", t.tokens.admin], {
    env: { ...process.env, BRAIN_URL: "", BRAIN_TOKEN: "" },
    stdio: ["pipe", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.stdin!.end();
  return { code: await exited, stderr };
}

it("refuses at start a daemon of an older Brain that lacks a route it calls, naming both versions", async () => {
  // An older daemon: this one's routes, less the interrupt and the sessions list's order, under an older version.
  const target = new URL(t.url);
  const proxy = createServer((req, res) => {
    const out = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        if (req.url !== "/openapi.json") {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          return answer.pipe(res);
        }
        let text = "";
        answer.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk;
        });
        answer.on("end", () => {
          const doc = JSON.parse(text);
          doc.info.version = "0.0.1-older";
          delete doc.paths["/v1/sessions/{id}/interrupt"];
          const list = doc.paths["/v1/sessions"].get;
          list.parameters = list.parameters.filter((p: { name: string }) => p.name !== "order");
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(doc));
        });
      },
    );
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  try {
    const older = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const { code, stderr } = await acpAgainst(older);
    expect(stderr).toContain(
      `the daemon at ${older} is Brain 0.0.1-older and this brain acp is ${installVersion()}`,
    );
    expect(stderr).toContain("does not serve GET /v1/sessions?order=, POST /v1/sessions/{id}/interrupt,");
    expect(stderr).toMatch(/Upgrade the daemon to Brain .*, or run brain acp without --server/);
    expect(code).toBe(1);
  } finally {
    proxy.close();
  }
});

it("starts against a daemon of its own version, and ends when the editor hangs up", async () => {
  expect(await acpAgainst(t.url)).toEqual({ code: 0, stderr: "" });
});

// The HTTP agent client's run stream: an agent may go quiet for as long as it thinks, so POST /run is never cut
// for idleness unless asked (fetch's defaults cut a body after 300 s without a byte).
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpAgentClient } from "./client.js";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** An agent that sends one text event, says nothing for `pauseMs`, then ends the run. */
async function pausingAgent(pauseMs: number): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write('data: {"type":"text","content":"thinking"}\n\n');
    setTimeout(() => res.end('data: {"type":"done"}\n\n'), pauseMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const body = { runId: "run-1", prompt: "go", history: [], tools: [] } as never;

describe("HttpAgentClient.run", () => {
  it("waits through a silent stretch by default, where an idle timeout would cut the stream", async () => {
    // undici checks its idle timers about once a second, so the pause is a few of those ticks long.
    const url = await pausingAgent(2500);
    const seen: string[] = [];
    const ended = await new HttpAgentClient(url, "agent").run(body, new AbortController().signal, (d) => {
      if (d.ok) seen.push(d.event.type);
    });
    expect(ended).toBe("done");
    expect(seen).toEqual(["text", "done"]);

    // The same agent through a client told to cut after 200 ms of silence: the knob the default leaves off.
    const cut = new HttpAgentClient(url, "agent", { runIdleTimeoutMs: 200 });
    await expect(cut.run(body, new AbortController().signal, () => {})).rejects.toThrow(
      /agent: the event stream of POST .*\/run broke/,
    );
  });

  it("an interrupt still stops a silent run at once", async () => {
    const url = await pausingAgent(60_000);
    const abort = new AbortController();
    const client = new HttpAgentClient(url, "agent");
    const ended = client.run(body, abort.signal, (d) => {
      if (d.ok && d.event.type === "text") abort.abort();
    });
    await expect(ended).resolves.toBe("aborted");
  });
});

describe("HttpAgentClient errors", () => {
  it("quote an agent's error page cut between words, so a secret the cut falls in stays out whole", async () => {
    // A page echoing a header, long enough that a cut at 300 characters falls inside the key.
    const secret = `sk-${"s".repeat(40)}`;
    const page = `${"x ".repeat(130)}Authorization: Bearer ${secret}`;
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(502, { "content-type": "text/html" });
      res.end(page);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => server.close());
    const client = new HttpAgentClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "agent");
    for (const message of await everyCallsError(client)) {
      expect(message).toContain("answered 502: x x");
      expect(message).not.toContain("sk-s");
    }
  });

  it("a run answered with no event stream says what came instead, not that a stream ended early", async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"error":"model gpt-9 is not served here"}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const run = new HttpAgentClient(url, "agent").run(body, new AbortController().signal, () => {});
    await expect(run).rejects.toThrow(
      `agent: POST ${url}/run answered 200 (Content-Type application/json) without one SSE event; an agent streams its run as text/event-stream, "data: {json}" lines. It sent: {"error":"model gpt-9 is not served here"}`,
    );
  });

  it("a run stream cut off in the middle of an event says so and quotes its start; the events before it are kept", async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end('data: {"type":"text","content":"whole"}\n\ndata: {"type":"text","content":"hal');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const seen: unknown[] = [];
    const run = new HttpAgentClient(url, "agent").run(body, new AbortController().signal, (d) => {
      seen.push(d.ok ? d.event : d.reason);
    });
    await expect(run).rejects.toThrow(
      `agent: the event stream of POST ${url}/run ended in the middle of an event, before a done event: data: {"type":"text","content":"hal`,
    );
    expect(seen).toEqual([{ type: "text", content: "whole" }]);
  });
});

/** What each of the client's kinds of call (GET /info, POST /run, a JSON call) fails with. */
async function everyCallsError(client: HttpAgentClient): Promise<string[]> {
  const failures = [
    client.info(5_000),
    client.run(body, new AbortController().signal, () => {}),
    client.call("/checkpoint", {}, 5_000),
  ];
  return Promise.all(
    failures.map((failure) =>
      failure.then(
        () => "",
        (err: Error) => err.message,
      ),
    ),
  );
}

describe("HttpAgentClient redirects", () => {
  it("are not followed: an agent cannot point Brain at an address only Brain's host reaches", async () => {
    // The stand-in for what only Brain's host reaches (a cloud metadata service, the daemon itself).
    const reached: string[] = [];
    const internal = createServer((req, res) => {
      req.resume();
      reached.push(`${req.method} ${req.url}`);
      res.end("AKIA-INTERNAL-CREDENTIALS");
    });
    await new Promise<void>((resolve) => internal.listen(0, "127.0.0.1", resolve));
    const to = `http://127.0.0.1:${(internal.address() as AddressInfo).port}/latest/meta-data`;
    const agent = createServer((req, res) => {
      req.resume();
      res.writeHead(req.method === "GET" ? 302 : 307, { location: to });
      res.end();
    });
    await new Promise<void>((resolve) => agent.listen(0, "127.0.0.1", resolve));
    closers.push(
      () => internal.close(),
      () => agent.close(),
    );
    const client = new HttpAgentClient(`http://127.0.0.1:${(agent.address() as AddressInfo).port}`, "agent");
    for (const message of await everyCallsError(client)) {
      expect(message).toMatch(/answered a redirect \(30[27]\); Brain does not follow an agent's redirects/);
      expect(message).not.toContain("AKIA");
    }
    await client.cancel("run-1", 5_000);
    await client.shutdown(5_000);
    expect(reached).toEqual([]);
  });
});

/** Resolves once `res` takes more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.on("drain", done).on("close", done);
  });
}

describe("HttpAgentClient answers of any size", () => {
  it("reads at most 10 MiB of an answer and the head of an error page, however much the agent sends", async () => {
    // Up to 64 MiB per request, written as the client takes it: what is counted is what Brain read (plus what
    // the sockets buffer). POST /run's error body has no timeout at all, so an endless one grew Brain for ever.
    const TOTAL = 64 << 20;
    const chunk = Buffer.alloc(1 << 20, "a");
    const sent = new Map<string, number>();
    const server = createServer(async (req, res) => {
      req.resume();
      const key = `${req.method} ${req.url}`;
      res.writeHead(req.url === "/run" ? 500 : 200, { "content-type": "application/json" });
      let gone = false;
      res.once("close", () => {
        gone = true;
      });
      let written = 0;
      while (written < TOTAL && !gone) {
        written += chunk.length;
        sent.set(key, written);
        if (!res.write(chunk)) await drained(res);
      }
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => {
      server.closeAllConnections();
      server.close();
    });
    const client = new HttpAgentClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "agent");
    await expect(client.info(60_000)).rejects.toThrow(/GET .*\/info answered more than 10 MiB/);
    await expect(client.call("/checkpoint", {}, 60_000)).rejects.toThrow(
      /POST .*\/checkpoint answered more than 10 MiB/,
    );
    await expect(client.run(body, new AbortController().signal, () => {})).rejects.toThrow(
      /POST .*\/run answered 500/,
    );
    for (const key of ["GET /info", "POST /checkpoint", "POST /run"]) {
      expect(sent.get(key), key).toBeLessThan(TOTAL);
    }
  });
});

// pi has no MCP client, so in `bound` mode a pi extension (loaded with `--no-extensions -e`, written beside the
// tool endpoint's socket) is one: it speaks MCP's JSON lines over that socket, after the secret, and registers
// each of Brain's tools with pi. Each tool's `required` list moves into its description and extra keys are let
// through: pi checks arguments itself and would answer a bad call without Brain hearing of it, so the loosened
// schema lets every call reach Brain, whose check against the full schema says what is wrong.
export const BRIDGE_SOURCE = `import { connect } from "node:net";

export default async function (pi) {
  const { BRAIN_TOOLS_SOCKET: path, BRAIN_TOOLS_SECRET: secret } = process.env;
  if (!path || !secret) throw new Error("Brain's tool bridge: BRAIN_TOOLS_SOCKET and BRAIN_TOOLS_SECRET must be set");
  const socket = connect(path);
  await new Promise((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", (err) => reject(new Error("Brain's tool bridge cannot reach Brain: " + err.message)));
  });
  socket.write(secret + "\\n");
  const waiting = new Map();
  let next = 1;
  let buffer = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk) => {
    buffer += chunk;
    for (let at = buffer.indexOf("\\n"); at >= 0; at = buffer.indexOf("\\n")) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      const wait = waiting.get(message.id);
      if (!wait) continue;
      waiting.delete(message.id);
      if (message.error) wait.reject(new Error(message.error.message));
      else wait.resolve(message.result);
    }
  });
  socket.on("close", () => {
    for (const wait of waiting.values()) wait.reject(new Error("Brain's tool endpoint closed"));
    waiting.clear();
  });
  socket.on("error", () => {});
  const send = (message) => socket.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\\n");
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      send({ id, method, params });
    });
  await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "brain-pi-bridge", version: "1" },
  });
  send({ method: "notifications/initialized" });
  const { tools } = await request("tools/list", {});
  for (const tool of tools) {
    const { required, additionalProperties, ...schema } = tool.inputSchema ?? {};
    const needs = Array.isArray(required) && required.length ? " Required arguments: " + required.join(", ") + "." : "";
    pi.registerTool({
      name: tool.name,
      label: tool.name,
      description: (tool.description ?? tool.name) + needs,
      parameters: { type: "object", ...schema },
      async execute(_id, params) {
        const result = await request("tools/call", { name: tool.name, arguments: params ?? {} });
        const text = (result.content ?? []).map((part) => part.text ?? "").join("\\n");
        if (result.isError) throw new Error(text);
        return { content: [{ type: "text", text }], details: {} };
      },
    });
  }
  // Only now: while pi awaits this function, the socket is all that keeps its process alive. Once pi runs, the
  // socket must not keep it from exiting.
  socket.unref();
}
`;

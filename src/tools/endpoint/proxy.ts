// The stdio side of a tool endpoint, written beside its socket: the harness starts it as an ordinary stdio MCP
// server. It sends the secret as its first line, then copies bytes both ways; it needs nothing but node.
export const PROXY_SOURCE = `"use strict";
const net = require("node:net");
const { BRAIN_TOOLS_SOCKET: path, BRAIN_TOOLS_SECRET: secret } = process.env;
if (!path || !secret) {
  process.stderr.write("brain tool proxy: BRAIN_TOOLS_SOCKET and BRAIN_TOOLS_SECRET must be set\\n");
  process.exit(2);
}
const socket = net.connect(path, () => {
  socket.write(secret + "\\n");
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
});
socket.on("error", (err) => {
  process.stderr.write("brain tool proxy: cannot reach Brain at " + path + ": " + err.message + "\\n");
  process.exit(1);
});
socket.on("close", () => process.exit(0));
process.stdin.on("end", () => socket.end());
`;

// Brain's SDK for nui extension authors in TypeScript: the same agents run under nui and under Brain, over
// stdio, TCP or HTTP/SSE. See README.md beside this file.
export { NuiAgent } from "./agent.js";
export { connectionFile, writeConnectionFile } from "./connection-file.js";
export { type HttpServeOptions, type HttpServing, serveHttp } from "./http-server.js";
export type { TcpServing } from "./tcp.js";
export type {
  ApprovalOptions,
  AskUserOptions,
  Chunk,
  HarnessEvent,
  HitlQuestion,
  HitlResponse,
  RunContext,
  RunParams,
} from "./types.js";

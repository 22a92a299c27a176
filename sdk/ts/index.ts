// Brain's runner SDK for TypeScript: implement a Runner, call serve(), and the SDK speaks Brain's runner stdio
// protocol for you. See README.md beside this file.
export type {
  MessageData,
  NativeFile,
  OpenParams,
  ProviderCredentials,
  SessionConfig,
  ToolResult,
  ToolSchema,
  Usage,
} from "../../src/protocol/runner.js";
export { providerError, RunnerFailure, TurnInterrupted } from "./errors.js";
export { type RunnerHost, type ServeOptions, serve } from "./host.js";
export type {
  Attachment,
  AttachmentInfo,
  PromptResult,
  Runner,
  ToolCallOptions,
  Turn,
} from "./types.js";

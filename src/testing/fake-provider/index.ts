// The project's fake model provider: a 127.0.0.1 HTTP server speaking the real streaming wire formats of
// OpenAI Chat Completions, Anthropic Messages, OpenAI Responses, Google Gemini and Ollama, answering from a script.
export { lastUserText } from "./scripts.js";
export { startFakeProvider } from "./server.js";
export { shellAgent } from "./shell-agent.js";
export type {
  FakeProvider,
  FakeProviderRequest,
  ScriptedToolCall,
  ScriptStep,
  StartOptions,
  StreamError,
  TokenUsage,
  WireFormat,
} from "./types.js";

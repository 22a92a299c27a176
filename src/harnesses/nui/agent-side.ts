// Why a fork of a session on a nui-protocol agent (an HTTP agent, an extension harness) starts a new agent
// conversation (HarnessFactory.agentSide): the agent keeps the conversation, the native dir only its id.
// Its own module, so the families' catalog entries can say it without loading their harness code.
export const NUI_AGENT_SIDE =
  "the agent keeps the conversation on its side; the native dir holds only the id it resumes it by";

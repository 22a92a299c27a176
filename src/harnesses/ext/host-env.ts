// The environment of an extension host: the runner protocol's minimal variables (docs/protocol.md), HOME (nui's SDKs find ~/.nui through it),
// the NUI_* variables nui sets, PYTHONPATH pointing at Brain's Python SDK (so `from nui_agent_stdio import
// NuiAgent` works as under nui), then the manifest's runtime env and the session's (ADL) env. Brain's own
// secrets never pass: provider keys reach an extension only when its agent definition names them in `env`.
import { minimalEnvironment } from "../process/environment.js";

export interface HostEnvInput {
  extensionDir: string;
  extensionName: string;
  harnessId: string;
  connectionId: string;
  home: string;
  /** Where TCP and HTTP hosts write connection files (Brain's SDKs read NUI_CONNECTIONS_DIR). */
  connectionsDir: string;
  /** Brain's Python SDK (sdk/python). */
  pythonSdkDir: string;
  apiUrl?: string;
  sessionId?: string;
  runId?: string;
  runtimeEnv?: Record<string, string>;
  sessionEnv?: Record<string, string>;
}

export function hostEnvironment(
  input: HostEnvInput,
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const nui: Record<string, string> = {
    HOME: input.home,
    NUI_EXTENSION_DIR: input.extensionDir,
    NUI_EXTENSION_NAME: input.extensionName,
    NUI_HARNESS_ID: input.harnessId,
    NUI_CONNECTION_ID: input.connectionId,
    NUI_CONNECTIONS_DIR: input.connectionsDir,
    NUI_HITL_SDK_DIR: input.pythonSdkDir,
    PYTHONPATH: input.pythonSdkDir,
    // Python buffers stdout when it is a pipe; unbuffered output streams each event as it is written.
    PYTHONUNBUFFERED: "1",
  };
  if (input.apiUrl) nui.NUI_API_URL = input.apiUrl;
  if (input.sessionId) nui.NUI_SESSION_ID = input.sessionId;
  if (input.runId) nui.NUI_RUN_ID = input.runId;
  return minimalEnvironment(from, { ...nui, ...input.runtimeEnv, ...input.sessionEnv });
}

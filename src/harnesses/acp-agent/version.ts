// The ACP version an agent answered initialize with. ACP: an agent that does not speak the version the client
// asked for answers the latest it does, and a client that does not speak that one closes the connection and
// tells the user. Talking on in version 1 to an agent of another version failed later, naming no version.
import { PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { HarnessError } from "../../core/harness.js";

export function refuseOtherVersion(label: string, version: unknown): void {
  if (version === PROTOCOL_VERSION) return;
  throw new HarnessError(
    "brain_error",
    `${label}: the agent answered initialize with ACP protocol version ${JSON.stringify(version)}, and Brain speaks ` +
      `only version ${PROTOCOL_VERSION}: use a release of the agent that speaks version ${PROTOCOL_VERSION}`,
  );
}

// The devcontainer.json Brain generates for a session, without any CLI: what it mounts and where.
import { describe, expect, it } from "vitest";
import { devcontainerJson } from "./config.js";

describe("the generated devcontainer.json", () => {
  it("mounts the work and session dirs at their own paths and Brain read-only", () => {
    expect(
      devcontainerJson({
        sessionId: "s1",
        image: "img",
        workingDir: "/work",
        mounts: ["/home/b/sessions/s1/native", "/work"],
        readOnlyMounts: ["/opt/brain"],
        remoteUser: "node",
      }),
    ).toEqual({
      name: "brain-session-s1",
      image: "img",
      workspaceFolder: "/work",
      workspaceMount: "source=/work,target=/work,type=bind",
      mounts: [
        "source=/home/b/sessions/s1/native,target=/home/b/sessions/s1/native,type=bind",
        "source=/opt/brain,target=/opt/brain,type=bind,readonly",
      ],
      overrideCommand: true,
      updateRemoteUserUID: false,
      remoteUser: "node",
    });
  });
});

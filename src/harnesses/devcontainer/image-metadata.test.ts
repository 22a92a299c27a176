// What of an image's devcontainer.metadata label is refused: only what reaches past the container.
import { describe, expect, it } from "vitest";
import { hostGrants } from "./image-metadata.js";

describe("hostGrants", () => {
  it("lets an image without the label, or whose label keeps to the container, run", () => {
    expect(hostGrants(undefined)).toEqual([]);
    expect(hostGrants("")).toEqual([]);
    expect(hostGrants("[]")).toEqual([]);
    const inside = [
      { remoteUser: "node", postCreateCommand: "npm ci", containerEnv: { A: "b" } },
      { mounts: [] },
      { hostRequirements: { cpus: 2, memory: "4gb", gpu: false } },
    ];
    expect(hostGrants(JSON.stringify(inside))).toEqual([]);
  });

  it("names each grant, in an array of entries or a single one", () => {
    const features = [
      {
        privileged: true,
        mounts: [{ source: "dind-var-lib-docker", target: "/var/lib/docker", type: "volume" }],
      },
      { capAdd: ["SYS_PTRACE"], securityOpt: ["seccomp=unconfined"] },
    ];
    expect(hostGrants(JSON.stringify(features))).toEqual([
      "privileged: true",
      'mounts: [{"source":"dind-var-lib-docker","target":"/var/lib/docker","type":"volume"}]',
      'capAdd: ["SYS_PTRACE"]',
      'securityOpt: ["seccomp=unconfined"]',
    ]);
    expect(hostGrants('{"hostRequirements":{"gpu":"optional"}}')).toEqual([
      'hostRequirements.gpu: "optional"',
    ]);
    expect(hostGrants('{"mounts":["source=/,target=/host,type=bind"]}')).toEqual([
      'mounts: ["source=/,target=/host,type=bind"]',
    ]);
  });

  it("refuses a label that is no JSON: what the CLI would make of it is unknown", () => {
    expect(hostGrants("[{privileged:true}]")).toEqual([
      "a devcontainer.metadata label that is no JSON (what the Dev Container CLI would make of it is unknown)",
    ]);
  });
});

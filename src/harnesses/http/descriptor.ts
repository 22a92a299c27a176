// The HTTP/SSE agent families' catalog entries: `remote` (an agent someone else runs) and `docker` (an agent
// image Brain starts per session). Their client code is imported when a session opens.
import { z } from "zod";
import { type FamilyDescriptor, LazyFactory } from "../family.js";
import { NUI_AGENT_SIDE } from "../nui/agent-side.js";

export const remoteFamily: FamilyDescriptor = {
  name: "remote",
  summary: "an HTTP/SSE agent already running at config.options.url (or host and port)",
  capabilities: { steering: "none", images: false, sharedHost: "never", provider: "always" },
  factories: () => [
    new LazyFactory(
      "remote",
      { steering: false, agentSide: NUI_AGENT_SIDE },
      async () => new (await import("./remote.js")).RemoteFactory(),
    ),
  ],
  adl: {
    needs: [
      { field: "host", fix: "where the agent runs, e.g. host: 10.0.1.42" },
      { field: "port", fix: "the port it listens on, e.g. port: 9090" },
    ],
  },
};

export const DockerSettings = z.strictObject({
  /** The docker program (name on PATH or path). */
  docker: z.string().optional(),
});

/** Whether a docker session's agent keeps its conversation in the native dir is known once it has run there. */
const dockerAgentSide = async (nativeDir: string) =>
  (await import("../nui/resume-state.js")).agentSideIn(nativeDir);

export const dockerFamily: FamilyDescriptor = {
  name: "docker",
  summary: "an HTTP/SSE agent image, one container per session",
  settings: { block: "nui", schema: DockerSettings },
  capabilities: { steering: "none", images: false, sharedHost: "never", provider: "always" },
  factories: (ctx) => {
    const program = (ctx.settings as z.infer<typeof DockerSettings>).docker ?? "docker";
    return [
      new LazyFactory("docker", { steering: false, agentSide: dockerAgentSide }, async () => {
        const [{ DockerFactory }, { DockerCli }, { ContainerRecords }] = await Promise.all([
          import("./docker.js"),
          import("./docker-cli.js"),
          import("./container-records.js"),
        ]);
        const records = new ContainerRecords(ctx.brainHome);
        return new DockerFactory("docker", new DockerCli(program), {}, records, ctx.config.containers);
      }),
    ];
  },
  adl: {
    needs: [
      { field: "image", fix: 'the image that serves the HTTP/SSE protocol, e.g. image: "my-agent:latest"' },
      {
        field: "containerPort",
        fix: "the port it listens on inside the container, e.g. containerPort: 9090",
      },
    ],
  },
};

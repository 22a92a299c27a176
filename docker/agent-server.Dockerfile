# A CLI family's agent image: the project's base image (scripts/docker-engine.sh: this host's node, built
# locally, nothing from a registry) running Brain's agent server (src/agent-server/agent-server.ts) for one
# family on port 8090. The pinned CLI packages and Brain itself are not copied in: the container mounts Brain's
# install read-only at BRAIN_ROOT (`-v BRAIN_ROOT:BRAIN_ROOT:ro`), as `sandbox: docker` does, so the image runs
# exactly the CLI versions package-lock.json pins. No provider URL or key is baked in: they come with each run.
# Built by scripts/agent-images.sh, which fills in the three build arguments.
ARG BASE
FROM ${BASE}
ARG FAMILY
ARG BRAIN_ROOT
ENV BRAIN_AGENT_FAMILY=${FAMILY} BRAIN_ROOT=${BRAIN_ROOT} PORT=8090 HOME=/tmp
EXPOSE 8090
# Exec form cannot expand variables: scripts/agent-images.sh rewrites @BRAIN_ROOT@ before the build.
CMD ["node", "@BRAIN_ROOT@/dist/src/agent-server/agent-server-main.js"]

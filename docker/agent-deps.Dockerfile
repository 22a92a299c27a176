# What a CLI family's agent image (agent-server.Dockerfile) is built on: the project's base image
# (scripts/docker-engine.sh: this host's node, built locally, nothing from a registry) with the packages the
# agent server runs, copied from this install as package-lock.json pins them, under /opt/brain/node_modules.
# Built by scripts/agent-images.sh from a context src/agent-server/image-context.ts fills; rebuilt only when a
# pinned package changes, so a change to Brain's code rebuilds only the small layer above.
ARG BASE
FROM ${BASE}
# Brain's runtime dependencies: the same layer in every family's image, built once.
COPY runtime/ /opt/brain/
# The family's pinned CLI package, what it needs beyond that, and its program in node_modules/.bin.
COPY cli/ /opt/brain/

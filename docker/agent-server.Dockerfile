# A CLI family's agent image: Brain's agent server (src/agent-server/agent-server.ts) for one family on port
# 8090, on the family's dependency image (agent-deps.Dockerfile). It carries what it runs: Brain's compiled
# build under /opt/brain/dist and, below it, the CLI package this install pins, so it needs no mount of the
# host's install. No provider URL or key is baked in: they come with each run.
# Built by scripts/agent-images.sh, which fills in the build arguments and the context (app/).
ARG DEPS
FROM ${DEPS}
ARG FAMILY
COPY app/ /opt/brain/
ENV BRAIN_AGENT_FAMILY=${FAMILY} PORT=8090 HOME=/tmp
EXPOSE 8090
CMD ["node", "/opt/brain/dist/src/agent-server/agent-server-main.js"]

# The transferops image: one image for the gateway, the six services and the migrations; the
# command selects the component (deploy/image/component.mjs):
#
#   podman run IMAGE gateway            # the /v1 HTTP API on PORT (8080)
#   podman run IMAGE fleet              # a service: gRPC on GRPC_PORT (fleet 50051 ... messaging 50056)
#   podman run IMAGE migrate [fleet...] # apply schema migrations, then exit
#
# Build (CI: deploy/image/build.sh, which also builds a stand-in base image when no registry is
# reachable):  podman build --format docker -t transferops:dev .
#
# Node runs the TypeScript sources as they are (--experimental-transform-types): there is no
# compile step and nothing is written at run time, so the root filesystem can be read-only.

ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim

# ---- production dependencies only ----------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/package.json gateway/
COPY services/kit/package.json services/kit/
COPY services/fleet/package.json services/fleet/
COPY services/dispatch/package.json services/dispatch/
COPY services/evidence/package.json services/evidence/
COPY services/intake/package.json services/intake/
COPY services/analytics/package.json services/analytics/
COPY services/messaging/package.json services/messaging/
# The lock file is honoured; dev and optional dependencies (the pinned Node, buf, tsx, vitest,
# embedded PostgreSQL's server binaries) are left out, and so is the test workspace.
RUN npm install --omit=dev --omit=optional --no-audit --no-fund --ignore-scripts \
  && npm cache clean --force \
  && rm -rf /root/.npm /tmp/*

# ---- the board: built here, only its static files are shipped ------------------------------
FROM ${NODE_IMAGE} AS board
WORKDIR /app
COPY package.json package-lock.json ./
COPY gateway/board/package.json gateway/board/
# Its build tools only (Vite, Preact, the typed client); esbuild and Rollup come as this
# platform's optional binaries, so optional dependencies stay in.
RUN npm install --workspace @transferops/board --include-workspace-root=false --no-audit --no-fund --ignore-scripts \
  && npm cache clean --force
COPY gateway/board gateway/board
# The server's files the board imports as they are (browser-safe): the kit's vocabularies and
# number rules, evidence's message kinds and dismissal reasons, fleet's webhook events. (Its
# imports of the services' reasons are types only: the build drops them.)
COPY services/kit/src/vocabulary.ts services/kit/src/msisdn.ts services/kit/src/
COPY services/evidence/src/domain/parsers/types.ts services/evidence/src/domain/parsers/
COPY services/evidence/src/domain/dismiss-reasons.ts services/evidence/src/domain/
COPY services/fleet/src/domain/webhook-events.ts services/fleet/src/domain/
RUN npm run build --workspace @transferops/board

# ---- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
LABEL org.opencontainers.image.title="transferops" \
  org.opencontainers.image.description="Transfer operations: HTTP gateway and gRPC services (command selects the component)" \
  org.opencontainers.image.source="https://example.invalid/transferops"
ENV NODE_ENV=production \
  GRPC_HOST=0.0.0.0 \
  HOST=0.0.0.0 \
  TMPDIR=/tmp
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY services ./services
COPY gateway ./gateway
COPY --from=board /app/gateway/board/dist ./gateway/board/dist
COPY deploy/image/component.mjs deploy/image/healthcheck.mjs deploy/image/topics.mjs ./deploy/image/
# Owned by root, run as `node` (uid 1000): the application cannot change its own code.
USER 1000:1000
EXPOSE 8080 50051 50052 50053 50054 50055 50056 9464
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "/app/deploy/image/healthcheck.mjs"]
ENTRYPOINT ["node", "--experimental-transform-types", "--disable-warning=ExperimentalWarning", "--disable-warning=TimeoutNegativeWarning", "/app/deploy/image/component.mjs"]
CMD ["gateway"]

# syntax=docker/dockerfile:1
# The image runs the npm package: the build stage packs it (npm pack, as a release
# does: the build, dist/, the example configs, the JSON Schema, and the lockfile as
# npm-shrinkwrap.json), the runtime stage installs that tarball with production
# dependencies only, at the versions the lockfile pins, as a non-root user.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md LICENSE CHANGELOG.md UPGRADING.md ./
COPY src ./src
COPY config ./config
RUN npm pack --pack-destination /tmp && mv /tmp/ledger-proxy-*.tgz /tmp/ledger-proxy.tgz

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /tmp/ledger-proxy.tgz /tmp/ledger-proxy.tgz
# The package unpacked as the app (dist/main.js, config/), its dependencies from
# its npm-shrinkwrap.json: what `npm install ledger-proxy-<version>.tgz` installs.
RUN tar -xzf /tmp/ledger-proxy.tgz --strip-components=1 -C /app \
  && npm ci --omit=dev --no-audit --no-fund \
  && rm /tmp/ledger-proxy.tgz && npm cache clean --force
USER node
# 8080: the public API; 9090: /metrics /healthz /readyz (admin)
EXPOSE 8080 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.LEDGER_PROXY_ADMIN_PORT||9090)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "dist/main.js"]
CMD ["--config", "/app/config/compose.yaml"]

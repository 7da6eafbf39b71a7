# syntax=docker/dockerfile:1
# Canopy API image: build with dev dependencies, run with production dependencies only, as a non-root user.

FROM node:24.11.1-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The npm workspace of the Node client: npm ci needs its package.json, and npm run build builds it too.
COPY clients/node/package.json ./clients/node/
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
COPY scripts ./scripts
COPY sdk ./sdk
COPY clients/node ./clients/node
COPY hub ./hub
RUN npm run build

FROM node:24.11.1-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/node/package.json ./clients/node/
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
# The demo catalogue's partner images, served at /demo/images/ (the SDK bundle is in dist/sdk).
COPY assets ./assets
# The embedded database (used only when DATABASE_URL is unset) lives in a volume the app user owns.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
# 3000: the API; 9464: Prometheus /metrics (METRICS_PORT; bound to METRICS_HOST, 127.0.0.1 unless set).
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--enable-source-maps", "--max-old-space-size=1024", "--max-semi-space-size=16", "--no-allocation-site-pretenuring", "dist/src/server.js"]

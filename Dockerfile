# One image for the three services; SERVICES picks which ones a container runs.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY services ./services
COPY schemas ./schemas
COPY infra ./infra
RUN npx tsc -p tsconfig.build.json && mkdir -p dist/infra/clickhouse && cp -r infra/clickhouse/migrations dist/infra/clickhouse/ && cp -r infra/rate-card dist/infra/

FROM node:20-bookworm-slim
ENV NODE_ENV=production
# libuv's thread pool: the embedded engine's statements and the journal's synced appends run on it (infra/local/process.ts).
ENV UV_THREADPOOL_SIZE=8
WORKDIR /app
COPY package.json package-lock.json ./
# The embedded ClickHouse engine (an optional platform package of chdb) is left out:
# containers always talk to a ClickHouse server through CLICKHOUSE_URL.
RUN npm ci --omit=dev --omit=optional --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 8080
CMD ["node", "--max-semi-space-size=64", "dist/services/main.js"]

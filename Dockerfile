# Atrium's container image. Two stages: the first installs every package and builds dist/ (server,
# command line, migrations, the embedded database's seed and the web app); the second keeps only what
# runs, as the unprivileged `node` user, with DATA_DIR on a volume.
#
#   docker build -t atrium .
#   docker run -p 8080:8080 -v atrium-data:/data atrium           (embedded database in /data)
#   docker run -p 8080:8080 -e DATABASE_URL=postgres://… -e SECRET_KEY=… atrium
#
# Node 24 (LTS): the suite runs on it in CI beside Node 20.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts wait for the sources: `prepare` is the build, run below once they are here.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm rebuild --no-audit --no-fund && npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# No curl in the slim image: Node's own fetch asks /healthz (the process answers; /readyz also
# checks the database and is what a load balancer should use).
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]

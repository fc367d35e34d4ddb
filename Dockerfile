# The bot in a container, started exactly as the tests start it in a production install
# (test/app/deploy-restart.test.ts): `npm ci --omit=dev`, then what `npm start` execs,
# `node bin/start.mjs`, run directly so SIGTERM from `docker stop` goes straight to the bot and
# no npm process sits beside it (npm alone holds about 56 MB). The bot then keeps every turn in
# flight (a pending approval stays pending; a streamed answer carries on after the restart)
# and exits 0 within 20 s, so keep docker's stop timeout above that (`--stop-timeout 30`).
#
# The bot is compiled at image build (`npm run build`, into dist/). Else the first
# `npm start` would compile it, and the bot's user may not write /app: it would then run
# from its TypeScript sources, with about 50 MB more memory, and say so at every start.
#
# Not built in CI: no Docker engine runs on the machines the tests run on.
#
# The shell sandbox needs bubblewrap and user namespaces. Docker's default seccomp profile
# refuses the unshare bubblewrap needs; with SHELL_SANDBOX=auto (the default) the bot then
# starts without its shell tool and says why in one warning line. To keep the shell, run with
# a seccomp profile that allows unshare/clone of user namespaces (or
# `--security-opt seccomp=unconfined`), or see docs/security.md, "The shell sandbox".
# Node 24: CI tests 20, 22 and 24 (.ci/node-matrix), and 20 is past its end of life.
FROM node:24-bookworm-slim

RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap python3 make g++ ca-certificates \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY . .
RUN npm run build

# A user of its own: the store (data/) and the workspace belong to it, nothing else does. The
# container starts as root only for bin/container-entry.sh, which hands the container's cgroup
# to that user where it may (cgroup v2 with --cgroupns=private and a writable cgroup file
# system: a memory cgroup per shell command, see docs/security.md, "The shell sandbox") and then runs the
# bot as it, with no capabilities. `docker run --user 10001` skips that step.
RUN useradd --create-home --uid 10001 bot && mkdir -p /app/data /app/workspace && chown -R bot:bot /app/data /app/workspace

ENV NODE_ENV=production LOG_FORMAT=json PORT=3000 HEALTH_PORT=8080
EXPOSE 3000 8080
VOLUME ["/app/data", "/app/workspace"]

# HTTP mode answers /healthz on PORT; Socket Mode and Discord on HEALTH_PORT (503 while stopping).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + process.env.HEALTH_PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"

STOPSIGNAL SIGTERM
# exec all the way down: the bot is PID 1, and SIGTERM from `docker stop` reaches it.
ENTRYPOINT ["/app/bin/container-entry.sh"]
CMD ["node", "bin/start.mjs"]

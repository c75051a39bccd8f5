# The benefits-sync image: the package as `npm pack` builds it, installed with `npm install -g`,
# exactly as the README's Install does, run as its own non-root user in the snapshot's folder.
#
# Build, from a clone (the build context is the tarball only, see .dockerignore):
#   npm ci && npm pack && docker build -t benefits-sync:0.1.0 .
# Not built on the machine where this was written (it has no docker): test/e2e/install.test.ts
# performs these instructions in order without docker, against a temporary npm prefix.
#
# better-sqlite3 is native: its install fetches a prebuilt binary for this Node and platform; a
# builder that cannot reach GitHub compiles it instead, which needs python3, make and g++ (not in
# the slim image).
FROM node:20-slim
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY benefits-sync-*.tgz /tmp/
RUN npm install -g /tmp/benefits-sync-*.tgz && rm /tmp/benefits-sync-*.tgz
# Its own user, by number, so that Kubernetes' runAsNonRoot can check it; the snapshot's folder is
# the only one it owns (mode 0700: the snapshot, its PII key and the inbox hold member data).
RUN groupadd --system --gid 10001 benefits-sync && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/benefits-sync --shell /usr/sbin/nologin benefits-sync && mkdir -p /var/lib/benefits-sync && chown 10001:10001 /var/lib/benefits-sync && chmod 0700 /var/lib/benefits-sync
WORKDIR /var/lib/benefits-sync
ENV BENEFITS_DB=/var/lib/benefits-sync/benefits-sync.db
VOLUME /var/lib/benefits-sync
USER 10001:10001
ENTRYPOINT ["benefits-sync"]
CMD ["--help"]

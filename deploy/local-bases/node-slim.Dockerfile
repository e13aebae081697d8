# node:<version>-bookworm-slim made locally (deploy/local-bases/make-local-bases.sh): Debian
# minbase, Node and npm from npm's registry, in the places the official image has them.
ARG DEBIAN_BASE
FROM ${DEBIAN_BASE}
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY host-ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
CMD ["node"]

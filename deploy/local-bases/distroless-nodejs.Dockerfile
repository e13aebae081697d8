# gcr.io/distroless/nodejs20-debian12:nonroot made locally (deploy/local-bases/make-local-bases.sh):
# Node and only the files it needs at run time, no shell, uid 65532, node as the entry point.
ARG DEBIAN_BASE
FROM ${DEBIAN_BASE} AS files
COPY node/bin/node /rootfs/nodejs/bin/node
COPY host-ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# The shared libraries node links to, found by the dynamic loader itself, plus the loader.
RUN set -e; mkdir -p /rootfs/etc /rootfs/tmp /rootfs/home/nonroot; \
    for lib in $(ldd /rootfs/nodejs/bin/node | awk '/=>/ {print $3} /ld-linux/ {print $1}'); do \
      mkdir -p "/rootfs$(dirname "$lib")" && cp -L "$lib" "/rootfs$lib"; \
    done; \
    mkdir -p /rootfs/lib64 /rootfs/etc/ssl/certs; \
    cp -L /lib64/ld-linux-x86-64.so.2 /rootfs/lib64/; \
    cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/; \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > /rootfs/etc/passwd; \
    printf 'root:x:0:\nnonroot:x:65532:\n' > /rootfs/etc/group; \
    chmod 1777 /rootfs/tmp; chown 65532:65532 /rootfs/home/nonroot

FROM scratch
COPY --from=files /rootfs/ /
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/nodejs/bin/node"]

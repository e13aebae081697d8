#!/usr/bin/env sh
# Makes the Secret lean-grpo-tls that the tls overlays mount in every pod (deploy/k8s/components/tls):
# a private certificate authority, and one server certificate it signs for every service's
# in-cluster names (inference, inference.NAMESPACE, inference.NAMESPACE.svc,
# inference.NAMESPACE.svc.cluster.local, and the same for the others), as the keys tls.crt,
# tls.key and ca.crt. Clients inside the mesh trust ca.crt; so must callers from outside
# (grpcurl -cacert, buf curl --cacert, NODE_EXTRA_CA_CERTS): deploy/README.md.
#
#   deploy/k8s/make-tls-secret.sh [--namespace NS] [--dir DIR] [--days N] [--cluster-domain D] [--name NAME]... [--files-only]
#
#   --namespace       the namespace the overlay deploys to (default lean-grpo; the dev overlay: lean-grpo-dev)
#   --dir             where the files are written (default ./lean-grpo-tls); a CA already there
#                     (ca.crt and ca.key) is reused, so renewing the server certificate keeps
#                     every client's trust
#   --days            validity of the server certificate (default 365; the CA: 3650)
#   --cluster-domain  the cluster's DNS domain (default cluster.local)
#   --name            another name (or IP address) the certificate holds: a name clients outside
#                     dial (an ingress, a load balancer), compose's learner-torch; repeatable
#   --files-only      write the files, make no Secret (then: kubectl apply -f DIR/secret.yaml)
#
# The Secret is applied with kubectl to the current context (created, or replaced on renewal);
# restart the Deployments to load a renewed one. ca.key signs certificates every client trusts:
# keep it off the cluster. For production, cert-manager can issue and renew the same Secret
# (deploy/README.md).
set -eu

namespace=lean-grpo
dir=./lean-grpo-tls
days=365
cluster_domain=cluster.local
files_only=false
services="inference verifier reward learner orchestrator"
extra=""

usage() {
  sed -n '9,19p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --namespace) namespace=${2:?--namespace needs a value}; shift 2 ;;
    --dir) dir=${2:?--dir needs a value}; shift 2 ;;
    --days) days=${2:?--days needs a value}; shift 2 ;;
    --cluster-domain) cluster_domain=${2:?--cluster-domain needs a value}; shift 2 ;;
    --name) extra="$extra ${2:?--name needs a value}"; shift 2 ;;
    --files-only) files_only=true; shift ;;
    -h|--help) usage ;;
    *) echo "make-tls-secret.sh: unknown argument $1" >&2; usage ;;
  esac
done
case "$namespace" in
  *[!a-z0-9-]*|-*|*-|"") echo "make-tls-secret.sh: namespace \"$namespace\" is not a DNS label (a-z, 0-9, -)" >&2; exit 2 ;;
esac
case "$days" in
  *[!0-9]*|"") echo "make-tls-secret.sh: --days \"$days\" is not a number of days" >&2; exit 2 ;;
esac
command -v openssl >/dev/null || { echo "make-tls-secret.sh: openssl is needed" >&2; exit 2; }

# The keys are for this user alone: the directory too.
umask 077
mkdir -p "$dir"

if [ -f "$dir/ca.crt" ] && [ -f "$dir/ca.key" ]; then
  echo "reusing the CA in $dir (ca.crt, ca.key)" >&2
else
  openssl req -x509 -newkey rsa:3072 -nodes -sha256 -days 3650 \
    -subj "/CN=lean-grpo mesh CA ($namespace)" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
fi

names=""
for service in $services; do
  for name in "$service" "$service.$namespace" "$service.$namespace.svc" "$service.$namespace.svc.$cluster_domain"; do
    names="${names:+$names,}DNS:$name"
  done
done
for name in $extra; do
  # An IPv6 address has a colon, an IPv4 one only digits and dots; anything else is a DNS name.
  case "$name" in
    *:*) names="$names,IP:$name" ;;
    *[!0-9.]*) names="$names,DNS:$name" ;;
    *) names="$names,IP:$name" ;;
  esac
done
cat >"$dir/server.ext" <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=$names
EOF
openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=lean-grpo mesh ($namespace)" \
  -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
openssl x509 -req -sha256 -days "$days" -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
  -CAcreateserial -extfile "$dir/server.ext" -out "$dir/tls.crt" 2>/dev/null
rm -f "$dir/tls.csr" "$dir/server.ext" "$dir/ca.srl"
openssl verify -CAfile "$dir/ca.crt" "$dir/tls.crt" >/dev/null

# The Secret as a manifest (type kubernetes.io/tls with ca.crt, as cert-manager writes it), base64 by openssl.
b64() { openssl base64 -A -in "$1"; }
cat >"$dir/secret.yaml" <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: lean-grpo-tls
  namespace: $namespace
type: kubernetes.io/tls
data:
  tls.crt: $(b64 "$dir/tls.crt")
  tls.key: $(b64 "$dir/tls.key")
  ca.crt: $(b64 "$dir/ca.crt")
EOF

echo "wrote $dir: ca.crt (trust this), ca.key (keep off the cluster), tls.crt, tls.key, secret.yaml" >&2
echo "the certificate names: $(echo "$names" | sed 's/DNS://g; s/IP://g')" >&2
if [ "$files_only" = true ]; then
  echo "apply it with: kubectl apply -f $dir/secret.yaml" >&2
else
  kubectl apply -f "$dir/secret.yaml"
fi

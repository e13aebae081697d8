"""What a learner that binds beyond loopback must have, as the TypeScript services have it
(packages/kit/src/server/exposure.ts): TLS, since the bearer token would otherwise cross the
network in clear text, unless server.allow_plaintext says the network already encrypts (a
service mesh's mTLS, a VPN, one host's private container network). The certificate and key
are read and checked before the server starts, so a wrong file stops it with the key named."""
from __future__ import annotations

import logging
import ssl

from .config import ConfigError

log = logging.getLogger("leangrpo_learner")


def is_loopback_host(host: str) -> bool:
    bare = host.strip("[]").lower()
    return bare in ("localhost", "::1", "::ffff:127.0.0.1") or bare.startswith("127.")


def require_tls_beyond_loopback(server: dict) -> None:
    """server.tls or server.allow_plaintext beyond loopback; the token rule is checked before this."""
    host = server["host"]
    if is_loopback_host(host) or server["tls"]["cert_file"] or server["allow_plaintext"]:
        return
    raise ConfigError(
        f'server.host "{host}" is beyond loopback without TLS, so the token would cross the network in clear text: '
        "give a certificate with server.tls.cert_file and server.tls.key_file (PEM; e.g. openssl req -x509 -newkey rsa:2048 -nodes "
        "-keyout key.pem -out cert.pem -subj /CN=HOST -addext subjectAltName=DNS:HOST), "
        "or set server.allow_plaintext: true where the network already encrypts (a service mesh's mTLS, a VPN)"
    )


def warn_if_plaintext_beyond_loopback(server: dict) -> None:
    if server["allow_plaintext"] and not server["tls"]["cert_file"] and not is_loopback_host(server["host"]):
        log.warning("serving without TLS beyond loopback (server.allow_plaintext): the bearer token crosses the network in clear text")


def read_tls_files(tls: dict) -> tuple[bytes, bytes] | None:
    """server.tls as (key, certificate chain) PEM bytes, checked to be a certificate and the key
    that belongs to it; None without TLS."""
    if not tls["cert_file"]:
        return None
    files = {}
    for key in ("cert_file", "key_file"):
        try:
            with open(tls[key], "rb") as file:
                files[key] = file.read()
        except OSError as error:
            raise ConfigError(f'config key "server.tls.{key}" names {tls[key]}, which cannot be read ({error.strerror})') from None
    # grpcio reports a bad certificate only as a port it could not bind: the standard library says what is wrong.
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(tls["cert_file"], tls["key_file"], password=_encrypted_key(tls))
    except ssl.SSLError as error:
        why = error.reason.lower().replace("_", " ") if error.reason else "no PEM certificate or private key found"
        raise ConfigError(
            f'config keys "server.tls.cert_file" ({tls["cert_file"]}) and "server.tls.key_file" ({tls["key_file"]}) '
            f"must be a PEM certificate chain and its private key: {why}"
        ) from None
    return files["key_file"], files["cert_file"]


def _encrypted_key(tls: dict):
    """Asked for only when the key is encrypted, which grpcio cannot read (and a server has no one to ask)."""

    def refuse():
        raise ConfigError(f'config key "server.tls.key_file" ({tls["key_file"]}) is encrypted; give the key unencrypted (PEM), readable by this user only')

    return refuse

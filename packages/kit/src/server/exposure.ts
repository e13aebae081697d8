// What a server that binds beyond loopback must have: a token, since anyone who can
// reach the port could otherwise call it, and TLS, since the token would otherwise
// cross the network in clear text. A network that already encrypts (a service mesh's
// mTLS, a VPN, one host's private container network) may be trusted instead, said
// explicitly with server.allow_plaintext. Checked by serve() itself, so that no entry
// point can start an exposed server without them.
import { isLoopbackHost, noTokenBeyondLoopback } from "../auth/mesh-token.js";
import type { ServerConfig } from "./server-config.js";

export class ExposureError extends Error {}

export function requireSafeExposure(config: Pick<ServerConfig, "host" | "tls" | "allow_plaintext" | "auth">): void {
  if (isLoopbackHost(config.host)) return;
  if (config.auth.token === undefined) throw new ExposureError(noTokenBeyondLoopback(config.host));
  if (config.tls === undefined && !config.allow_plaintext) {
    throw new ExposureError(
      `server.host "${config.host}" is beyond loopback without TLS, so the token would cross the network in clear text: ` +
        "give a certificate with server.tls.cert_file and server.tls.key_file (PEM; e.g. openssl req -x509 -newkey rsa:2048 -nodes " +
        "-keyout key.pem -out cert.pem -subj /CN=HOST -addext subjectAltName=DNS:HOST), " +
        "or set server.allow_plaintext: true where the network already encrypts (a service mesh's mTLS, a VPN)",
    );
  }
}

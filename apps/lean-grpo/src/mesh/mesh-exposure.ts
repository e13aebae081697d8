// What `lean-grpo serve` (one service, `all`, `--topology`) checks before it starts anything:
// each service that binds beyond loopback has TLS or an explicit server.allow_plaintext (the
// kit's rule, which serve() applies to each server as it starts: checked here for all of them
// first, so that a refusal never leaves the services started before it running), and each
// certificate given can be loaded with its key. A refusal names every service and key at once.
import { createSecureContext } from "node:tls";
import { readFileSync } from "node:fs";
import { ExposureError, requireSafeExposure, type ServerConfig } from "@lean-grpo/kit";

export interface ExposedServer {
  /** The service, for the message ("verifier", or "verifier[1]" for a replica). */
  service: string;
  /** What its config keys are written with: "verifier." under `serve all` (one config), "" for one service. */
  keyPrefix: string;
  server: Pick<ServerConfig, "host" | "tls" | "allow_plaintext">;
}

export function requireMeshExposure(servers: readonly ExposedServer[]): void {
  const problems = servers.flatMap(({ service, keyPrefix, server }) => {
    const key = (name: string) => `${keyPrefix}server.${name}`;
    try {
      // `serve` gives every service beyond loopback a token (mesh-auth.ts): only TLS is in question here.
      requireSafeExposure({ ...server, auth: { token: "the mesh token" } });
    } catch (error) {
      if (!(error instanceof ExposureError)) throw error;
      return [
        `${service}: ${key("host")} "${server.host}" is beyond loopback without TLS, so the token would cross the network in clear text; ` +
          `give ${key("tls.cert_file")} and ${key("tls.key_file")} (PEM), or set ${key("allow_plaintext")}=true where the network already encrypts (a service mesh's mTLS, a VPN)`,
      ];
    }
    const problem = server.tls === undefined ? undefined : certificateProblem(server.tls, key);
    return problem === undefined ? [] : [`${service}: ${problem}`];
  });
  if (problems.length > 0) {
    throw new Error(
      `nothing was started:\n  ${problems.join("\n  ")}\n(docs/guide/security.md#tls; deploy/k8s/make-tls-secret.sh makes a CA and a certificate)`,
    );
  }
}

/** Why a certificate and key cannot serve TLS (unreadable, not PEM, not a pair), naming the key; undefined when they can. */
function certificateProblem(tls: NonNullable<ServerConfig["tls"]>, key: (name: string) => string): string | undefined {
  const files: Record<string, Buffer> = {};
  for (const [name, file] of [
    ["tls.cert_file", tls.cert_file],
    ["tls.key_file", tls.key_file],
  ] as const) {
    try {
      files[name] = readFileSync(file);
    } catch (error) {
      return `${key(name)} "${file}" cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
    }
  }
  try {
    createSecureContext({ cert: files["tls.cert_file"], key: files["tls.key_file"] });
  } catch (error) {
    return `${key("tls.cert_file")} "${tls.cert_file}" and ${key("tls.key_file")} "${tls.key_file}" are not a PEM certificate and its key (${(error as Error).message})`;
  }
  return undefined;
}

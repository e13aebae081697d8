// TLS for what `lean-grpo serve` starts (`all`, `--topology`): the address the mesh's own
// clients dial a TLS service at, whether they will trust its certificate there (checked before
// anything starts: a client that refuses the certificate would fail every call of a run, late),
// and what the operator is told so that other clients can trust it too.
import { X509Certificate } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { isIP } from "node:net";
import { checkServerIdentity, connect, createServer, type PeerCertificate } from "node:tls";
import type { ServerConfig } from "@lean-grpo/kit";

type TlsFiles = NonNullable<ServerConfig["tls"]>;
type Bind = Pick<ServerConfig, "host" | "tls">;

/** Every interface: a URL with this host reaches the server on this machine, under no name a certificate holds. */
export function isWildcardHost(host: string): boolean {
  return ["0.0.0.0", "::", "[::]"].includes(host);
}

/**
 * The host the mesh's own clients (and the operator, on this machine) dial a server at. Its
 * bind address, except a TLS server bound to every interface: then the first of this machine's
 * loopback address, `localhost` and its host name that the certificate names (a client checks
 * the certificate for the host it dials), or the bind address when it names none of them.
 */
export function dialHost(server: Bind): string {
  if (server.tls === undefined || !isWildcardHost(server.host)) return server.host;
  const certificate = leafCertificate(server.tls);
  const loopback = server.host === "0.0.0.0" ? "127.0.0.1" : "::1";
  return [loopback, "localhost", hostname()].find((name) => names(certificate, name)) ?? server.host;
}

/**
 * The name a client must check the certificate for when it dials a TLS server at its dial
 * host, which the certificate does not name (a cluster's certificate served on 127.0.0.1):
 * the certificate's first DNS name. Undefined when the dial host will do.
 */
export function servernameFor(server: Bind): string | undefined {
  if (server.tls === undefined) return undefined;
  const certificate = leafCertificate(server.tls);
  if (names(certificate, dialHost(server))) return undefined;
  return /DNS:([^,\s]+)/.exec(certificate.subjectAltName ?? "")?.[1];
}

/** `scheme://host:port` as the mesh's clients dial it. */
export function dialUrl(server: Bind, port: number): string {
  const host = dialHost(server);
  return `${server.tls ? "https" : "http"}://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

export interface DialledServer {
  service: string;
  /** "verifier." under `serve all`, "" for a service of its own (a topology's replica). */
  keyPrefix: string;
  server: Bind;
}

/**
 * Refuses (before anything starts) a TLS service that this process's clients would not trust
 * at the address they dial it at: Node's trusted authorities (its own, plus NODE_EXTRA_CA_CERTS,
 * which every process `serve` starts inherits) must hold the certificate's issuer, and the
 * certificate the name dialled. A real handshake with the certificate, on a loopback port of
 * its own, is what decides: the check Node's clients make.
 */
export async function requireTrustedInProcess(servers: readonly DialledServer[]): Promise<void> {
  const problems: string[] = [];
  for (const { service, keyPrefix, server } of servers) {
    if (server.tls === undefined) continue;
    const host = dialHost(server);
    const key = `${keyPrefix}server.tls.cert_file "${server.tls.cert_file}"`;
    const leaf = leafCertificate(server.tls);
    if (!names(leaf, host)) {
      const also = isWildcardHost(server.host) ? " (bound to every interface: or 127.0.0.1, or localhost)" : "";
      problems.push(
        `${service}: this mesh's own clients dial it at ${host}, which ${key} does not name (it names ${namesOf(leaf)}); the certificate must name ${host}${also}`,
      );
      continue;
    }
    const refusal = await handshakeRefusal(server.tls, host);
    if (refusal !== undefined) {
      problems.push(
        `${service}: this mesh's own clients would refuse ${key} (${refusal}); start with NODE_EXTRA_CA_CERTS=<the file of the CA that ` +
          "issued it> (for a self-signed certificate, the certificate itself), which Node reads at start",
      );
    }
  }
  if (problems.length > 0) throw new Error(`nothing was started:\n  ${problems.join("\n  ")}`);
}

async function handshakeRefusal(tls: TlsFiles, host: string): Promise<string | undefined> {
  const server = createServer({ cert: readFileSync(tls.cert_file), key: readFileSync(tls.key_file) }, (socket) => socket.end());
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  try {
    const { port } = server.address() as { port: number };
    // An IP address is checked as the host; a name is sent as SNI and checked as the server name.
    const bare = host.replace(/^\[|\]$/g, "");
    const socket = connect({
      host: "127.0.0.1",
      port,
      ...(isIP(bare) ? { checkServerIdentity: identityFor(bare) } : { servername: bare }),
    });
    socket.setTimeout(5_000);
    return await new Promise<string | undefined>((resolve) => {
      socket.once("secureConnect", () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once("error", (error) => resolve(error.message));
      socket.once("timeout", () => {
        socket.destroy();
        resolve("no TLS handshake within 5 s");
      });
    });
  } finally {
    server.close();
  }
}

/** Checks the certificate for an IP address while the handshake runs to the loopback port. */
function identityFor(address: string) {
  return (_host: string, cert: PeerCertificate) => checkServerIdentity(address, cert);
}

/**
 * What the operator is told when services speak TLS: the names their certificate holds and how
 * clients trust it, with the file to trust where it is known (the CA in NODE_EXTRA_CA_CERTS that
 * issued it, or the certificate itself when it is self-signed).
 */
export function describeMeshTls(servers: readonly { service: string; server: Bind }[], env: NodeJS.ProcessEnv = process.env): string[] {
  const byCertificate = new Map<string, string[]>();
  for (const { service, server } of servers) {
    if (server.tls) byCertificate.set(server.tls.cert_file, [...(byCertificate.get(server.tls.cert_file) ?? []), service]);
  }
  return [...byCertificate].map(([file, services]) => {
    const leaf = leafCertificate({ cert_file: file, key_file: "" });
    const ca = trustedFile(leaf, file, env);
    const trust = ca
      ? `trust ${ca}: NODE_EXTRA_CA_CERTS=${ca} (Node: the lean-grpo CLI, the dashboard), grpcurl -cacert ${ca}, buf curl --http2-prior-knowledge --cacert ${ca}, ` +
        `grpc.ssl_channel_credentials(open("${ca}", "rb").read()) (Python)`
      : `trust the CA that issued it (${leaf.issuer.replace(/\n/g, ", ")}): NODE_EXTRA_CA_CERTS, grpcurl -cacert, buf curl --http2-prior-knowledge --cacert, grpc.ssl_channel_credentials (Python)`;
    return `tls    on (${services.join(", ")}): clients dial https:// at a name the certificate holds (${namesOf(leaf)}) and ${trust}`;
  });
}

/**
 * buf curl's flags for a server: HTTP/2 (over TLS too: buf curl then offers only h2, which gRPC
 * and reflection need, where the server would answer HTTP/1.1 to a client that offers it), the
 * file to trust where it is known, and the name to check where the certificate does not name
 * the address.
 */
export function bufCurlFlags(server: Bind): string {
  if (!server.tls) return " --http2-prior-knowledge";
  const ca = trustedFile(leafCertificate(server.tls), server.tls.cert_file);
  const servername = servernameFor(server);
  return ` --http2-prior-knowledge --cacert ${ca ?? "CA.pem"}${servername ? ` --servername ${servername}` : ""}`;
}

/** The file a client should trust for this certificate, where it can be told; undefined otherwise. */
export function trustedFile(leaf: X509Certificate, certFile: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const extra = env.NODE_EXTRA_CA_CERTS;
  if (extra) {
    try {
      if (certificatesIn(readFileSync(extra, "utf8")).some((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey))) return extra;
    } catch {
      /* unreadable: Node warned at start; fall through */
    }
  }
  return leaf.checkIssued(leaf) && leaf.verify(leaf.publicKey) ? certFile : undefined;
}

/** Whether a certificate is valid for a host name or an IP address (as a client checks it). */
function names(certificate: X509Certificate, host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  return isIP(bare) ? certificate.checkIP(bare) !== undefined : certificate.checkHost(bare) !== undefined;
}

/** The names a certificate holds, for a message. */
function namesOf(certificate: X509Certificate): string {
  return certificate.subjectAltName?.replace(/DNS:|IP Address:/g, "") ?? certificate.subject;
}

function leafCertificate(tls: TlsFiles): X509Certificate {
  const [leaf] = certificatesIn(readFileSync(tls.cert_file, "utf8"));
  if (!leaf) throw new Error(`server.tls.cert_file "${tls.cert_file}" holds no PEM certificate`);
  return leaf;
}

function certificatesIn(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((block) => new X509Certificate(block));
}

// Which requests the dashboard answers at all, before any route: a `Host` it serves (so a
// page on attacker.example whose name was rebound to 127.0.0.1 is refused: its requests
// carry `Host: attacker.example`), and, for anything that can change state or reaches the
// orchestrator, no `Origin` but its own (a cross-site form or fetch is refused).
import { networkInterfaces, hostname } from "node:os";
import type { IncomingMessage } from "node:http";
import { isLoopbackHost } from "@lean-grpo/kit";

/** The names a browser may reach this dashboard by, as URL hostnames (IPv6 in brackets, lower case). */
export function servedHostnames(boundHost: string, extra: readonly string[] = []): Set<string> {
  const names = new Set<string>();
  const add = (name: string) => {
    const normal = hostnameOf(name.includes(":") && !name.startsWith("[") ? `[${name}]` : name);
    if (normal !== undefined) names.add(normal);
  };
  add(boundHost);
  // Bound to every interface: the machine's own name and addresses reach it too.
  if (isWildcard(boundHost)) {
    add(hostname());
    for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) add(a.address);
  }
  for (const name of extra) add(name);
  return names;
}

export type Refusal = { status: number; message: string };

/** Refuses a `Host` that is not a loopback name or address, the bound host or an allowed name. */
export function checkHost(request: IncomingMessage, served: ReadonlySet<string>): Refusal | undefined {
  const given = request.headers.host;
  if (!given) return { status: 400, message: "a Host header is required\n" };
  const name = hostnameOf(given);
  if (name !== undefined && (isLoopbackHost(name) || served.has(name))) return undefined;
  return {
    status: 421,
    message: `this dashboard does not serve the name ${JSON.stringify(given.slice(0, 100))}; start it with --allow-host NAME to open it by that name\n`,
  };
}

/**
 * Refuses a request whose `Origin` is not this page's own (`http://<Host>`), or is "null". A
 * browser sends Origin with every POST, fetch or not; a client that is no browser (curl, a
 * script) sends none, and meets the token instead.
 */
export function checkOrigin(request: IncomingMessage): Refusal | undefined {
  const origin = request.headers.origin;
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none")
    return { status: 403, message: `cross-site requests are refused here (Sec-Fetch-Site: ${site})\n` };
  if (origin === undefined) return undefined;
  const parsed = URL.parse(origin);
  const own = URL.parse(`${parsed?.protocol ?? "http:"}//${request.headers.host ?? ""}`);
  if (parsed !== null && own !== null && (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.host === own.host)
    return undefined;
  return { status: 403, message: "requests from another origin are refused here\n" };
}

function hostnameOf(host: string): string | undefined {
  return URL.parse(`http://${host}`)?.hostname || undefined;
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}

// Who may read through the dashboard once auth is on. A browser trades a token once (POST
// /session with "authorization: Bearer <token>", which the page does with the #token=… of
// the link it was opened by) for a session cookie: HttpOnly, so no script reads it, and
// SameSite=Strict, so no other site's page sends it. Other clients present a token on every
// request. Tokens are compared in constant time, as the mesh's services compare theirs.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tokenDigest as digest, tokensEqual } from "@lean-grpo/kit";

export class BrowserAccess {
  /** The token of the link the dashboard prints: its own, made for this process. */
  readonly pageToken = randomBytes(32).toString("base64url");
  /** One session value for this process, handed only to a request that presented a token. */
  private readonly session = randomBytes(32).toString("base64url");
  private readonly sessionDigest = digest(this.session);
  private readonly tokenDigests: Buffer[];
  /**
   * Cookies are scoped to a host, not a port: the name carries the port, so that two
   * dashboards on one machine do not overwrite each other's.
   */
  readonly cookieName: string;

  constructor(accepted: readonly string[], port: number) {
    this.tokenDigests = [this.pageToken, ...accepted.filter((t) => t.length > 0)].map(digest);
    this.cookieName = `lean-grpo-dashboard-${port}`;
  }

  /** A request that presents a token, or the session cookie a token was traded for. */
  allows(request: IncomingMessage): boolean {
    const token = bearerOf(request);
    if (token !== undefined) return this.accepts(token);
    // Several cookies of that name (another page on this host may set one): any may be ours.
    return cookieValues(request, this.cookieName)
      .map((value) => tokensEqual(value, this.sessionDigest))
      .includes(true);
  }

  /** POST /session: a token for the session cookie; 401 for anything else. */
  openSession(request: IncomingMessage, response: ServerResponse): void {
    const token = bearerOf(request);
    if (token === undefined || !this.accepts(token)) {
      response.writeHead(401, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
      response.end('send the dashboard\'s token as "authorization: Bearer <token>"\n');
      return;
    }
    response.writeHead(204, {
      "set-cookie": `${this.cookieName}=${this.session}; Path=/; HttpOnly; SameSite=Strict`,
      "cache-control": "no-store",
    });
    response.end();
  }

  /** Every accepted token is compared (no early exit), each in constant time. */
  private accepts(token: string): boolean {
    return this.tokenDigests.map((expected) => tokensEqual(token, expected)).includes(true);
  }
}

function bearerOf(request: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? "");
  return match?.[1];
}

function cookieValues(request: IncomingMessage, name: string): string[] {
  return (request.headers.cookie ?? "")
    .split(";")
    .map((pair) => pair.trim().split("="))
    .filter(([key, value]) => key === name && value !== undefined)
    .map(([, value]) => value!);
}

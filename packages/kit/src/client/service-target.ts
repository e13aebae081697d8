// How a config names the replicas of a service it calls: one or more http(s):// URLs, or
// one `dns:///host:port` whose addresses are the replicas (a headless Service, compose's
// `--scale`), or `dns+https:///host:port`, the same over TLS (each replica's certificate
// checked for host). One schema and one conversion, so every caller accepts the same forms.
import { z } from "zod";

const HTTP_URL = /^https?:\/\/\S+$/;
const DNS_TARGET = /^dns(\+https)?:\/\/\/\S+:\d+$/;

/** One http(s):// URL, or one dns:///host:port or dns+https:///host:port. */
export const ServiceTargetSchema = z.string().refine((url) => HTTP_URL.test(url) || DNS_TARGET.test(url), {
  message: "expected an http(s):// URL, dns:///host:port or dns+https:///host:port (TLS)",
});

/** The balanced client's options for a target, or for a list of replica URLs. */
export function clientTarget(urls: string | readonly string[]): { target: string } | { endpoints: string[] } {
  const list = typeof urls === "string" ? [urls] : [...urls];
  const [first] = list;
  if (first !== undefined && DNS_TARGET.test(first)) {
    if (list.length > 1) throw new Error(`a dns:/// target names every replica by itself; got it among ${list.length} URLs`);
    return { target: first };
  }
  return { endpoints: list };
}

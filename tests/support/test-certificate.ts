// Test helper: a throwaway certificate authority and a server certificate it signs for
// the names given, made with openssl (as an operator would, deploy/k8s/make-tls-secret.sh).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface TestCertificate {
  /** The CA's certificate: what a client trusts. */
  ca: string;
  cert: string;
  key: string;
}

/** A CA and a certificate it signed for `names` (DNS names or IP addresses). */
export function issueTestCertificate(names: string[]): TestCertificate {
  const dir = mkdtempSync(path.join(tmpdir(), "kit-cert-"));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
  try {
    openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=test CA",
      "-keyout",
      file("ca.key"),
      "-out",
      file("ca.crt"),
    );
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=${names[0]}`, "-keyout", file("tls.key"), "-out", file("tls.csr"));
    const san = names.map((n) => (/^[\d.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(",");
    writeFileSync(file("ext"), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
    openssl(
      "x509",
      "-req",
      "-in",
      file("tls.csr"),
      "-CA",
      file("ca.crt"),
      "-CAkey",
      file("ca.key"),
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      file("ext"),
      "-out",
      file("tls.crt"),
    );
    return {
      ca: readFileSync(file("ca.crt"), "utf8"),
      cert: readFileSync(file("tls.crt"), "utf8"),
      key: readFileSync(file("tls.key"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes a certificate's files (ca.crt, tls.crt, tls.key) into `dir`; returns their paths. */
export function writeTestCertificate(dir: string, issued: TestCertificate): { ca: string; cert: string; key: string } {
  const files = { ca: path.join(dir, "ca.crt"), cert: path.join(dir, "tls.crt"), key: path.join(dir, "tls.key") };
  writeFileSync(files.ca, issued.ca);
  writeFileSync(files.cert, issued.cert);
  writeFileSync(files.key, issued.key);
  return files;
}

import { describe, expect, it } from "vitest";
import { prepareSandbox, workerEnvironment, type SandboxConfig } from "./sandbox.js";

const config: SandboxConfig = { network: "isolate", limits: { address_space_mb: 0, file_size_mb: 1024, processes: 0 } };

function recordingLogger() {
  const lines: string[] = [];
  const logger = {
    warn: (...args: unknown[]) => void lines.push(args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" ")),
  };
  return { logger, lines };
}

describe("prepareSandbox", () => {
  it("wraps the command in prlimit and unshare when the host allows them", async () => {
    const tried: string[][] = [];
    const { logger, lines } = recordingLogger();
    const sandbox = await prepareSandbox(
      { ...config, limits: { address_space_mb: 12288, file_size_mb: 1, processes: 64 } },
      logger,
      async (argv) => {
        tried.push([...argv]);
        return true;
      },
    );
    expect(sandbox.wrap(["lake", "env", "repl"])).toEqual([
      "prlimit",
      "--core=0",
      "--fsize=1048576",
      `--as=${12288 * 1024 * 1024}`,
      "--nproc=64",
      "--",
      "unshare",
      "--net",
      "--",
      "lake",
      "env",
      "repl",
    ]);
    expect(sandbox.enforced).toEqual([
      "resource limits (--core=0 --fsize=1048576 --as=12884901888 --nproc=64)",
      "no network (unshare --net)",
    ]);
    expect(tried).toHaveLength(2);
    expect(lines).toEqual([]);
  });

  it("tries a user namespace when a plain network namespace is refused", async () => {
    const { logger } = recordingLogger();
    const sandbox = await prepareSandbox(config, logger, async (argv) => argv[0] === "prlimit" || argv.includes("--map-current-user"));
    expect(sandbox.wrap(["repl"])).toEqual([
      "prlimit",
      "--core=0",
      "--fsize=1073741824",
      "--",
      "unshare",
      "--user",
      "--map-current-user",
      "--net",
      "--",
      "repl",
    ]);
  });

  it("runs workers unconfined, with a warning for each missing piece, where the host allows nothing", async () => {
    const { logger, lines } = recordingLogger();
    const sandbox = await prepareSandbox(config, logger, async () => false);
    expect(sandbox.wrap(["repl"])).toEqual(["repl"]);
    expect(sandbox.enforced).toEqual([]);
    expect(lines.join("")).toContain("REPL workers run WITH network access");
    expect(lines.join("")).toContain("prlimit is not available");
  });

  it("asks for no network namespace when the config allows the network", async () => {
    const { logger } = recordingLogger();
    const sandbox = await prepareSandbox({ ...config, network: "allow" }, logger, async () => true);
    expect(sandbox.wrap(["repl"])).toEqual(["prlimit", "--core=0", "--fsize=1073741824", "--", "repl"]);
  });
});

describe("workerEnvironment", () => {
  it("passes only Lean's and the locale's variables, the extras, and a private TMPDIR", () => {
    const env = workerEnvironment(
      { PATH: "/bin", HOME: "/home/u", ELAN_HOME: "/e", AWS_SECRET_ACCESS_KEY: "x", LEANGRPO_SERVER__AUTH__TOKEN: "t", TMPDIR: "/tmp" },
      { LEAN_NUM_THREADS: "1" },
      "/tmp/w0",
    );
    expect(env).toEqual({
      PATH: "/bin",
      HOME: "/home/u",
      ELAN_HOME: "/e",
      LEAN_NUM_THREADS: "1",
      TMPDIR: "/tmp/w0",
      TMP: "/tmp/w0",
      TEMP: "/tmp/w0",
    });
  });
});

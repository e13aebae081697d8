import { describe, expect, it } from "vitest";
import { prepareSandbox, SandboxUnavailable, workerEnvironment, type CommandRunner, type SandboxConfig } from "./sandbox.js";

const none: SandboxConfig = { mode: "none", network: "isolate", read_only: [], writable: [], limits: { file_size_mb: 1024 } };
const bwrap: SandboxConfig = { ...none, mode: "bwrap" };
const spec = { command: ["lake", "env", "/usr/bin/env"], cwd: "/usr/share", privateDir: "/tmp/w0", env: {} };

function recordingLogger() {
  const lines: string[] = [];
  const logger = {
    warn: (...args: unknown[]) => void lines.push(args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" ")),
  };
  return { logger, lines };
}

const succeeds: CommandRunner = () => ({ ok: true, stderr: "" });
const fails: CommandRunner = () => ({ ok: false, stderr: "bwrap: No permissions to create new namespace" });

describe("prepareSandbox, mode bwrap", () => {
  it("runs the command under bubblewrap, its limits set inside, with the default address-space and process caps", () => {
    const tried: string[][] = [];
    const sandbox = prepareSandbox(bwrap, recordingLogger().logger, (argv) => {
      tried.push([...argv]);
      return { ok: true, stderr: "" };
    });
    const argv = sandbox.wrap(spec);
    expect(argv[0]).toBe("bwrap");
    expect(argv).toEqual(
      expect.arrayContaining(["--unshare-all", "--die-with-parent", "--new-session", "--uid", "65534", "--cap-drop", "ALL"]),
    );
    expect(argv).not.toContain("--share-net");
    const inside = argv.slice(argv.indexOf("--") + 1);
    expect(inside).toEqual(["prlimit", "--core=0", "--fsize=1073741824", `--as=${32 * 1024 ** 3}`, "--nproc=1024", "--", ...spec.command]);
    // The probe is the same sandbox around `true`.
    expect(tried).toHaveLength(1);
    expect(tried[0]!.slice(-3)).toEqual(["--nproc=1024", "--", "true"]);
  });

  it("binds the working directory and the command's paths read-only, and only the private directory writable", () => {
    const argv = prepareSandbox(bwrap, recordingLogger().logger, succeeds).wrap(spec);
    const pairs = (flag: string) => argv.flatMap((arg, i) => (arg === flag ? [argv[i + 1]] : []));
    expect(pairs("--ro-bind")).toEqual(expect.arrayContaining(["/usr", "/usr/share", "/usr/bin/env"]));
    expect(pairs("--bind")).toEqual(["/tmp/w0"]);
    expect(argv.join(" ")).toContain("--proc /proc --dev /dev --tmpfs /tmp");
    // /tmp is fresh before the private directory is bound into it.
    expect(argv.indexOf("--tmpfs")).toBeLessThan(argv.lastIndexOf("--bind"));
    expect(argv.slice(argv.indexOf("--chdir"), argv.indexOf("--chdir") + 2)).toEqual(["--chdir", "/usr/share"]);
  });

  it("keeps the host's network only when asked", () => {
    expect(prepareSandbox({ ...bwrap, network: "allow" }, recordingLogger().logger, succeeds).wrap(spec)).toContain("--share-net");
  });

  it("refuses to start where bubblewrap cannot run, saying how to fix it or opt out", () => {
    expect(() => prepareSandbox(bwrap, recordingLogger().logger, fails)).toThrow(SandboxUnavailable);
    expect(() => prepareSandbox(bwrap, recordingLogger().logger, fails)).toThrow(
      /bubblewrap cannot run here \(bwrap: No permissions to create new namespace\): install it .* or set repl.sandbox.mode: none/,
    );
  });

  it("refuses extra binds that do not exist, naming them", () => {
    expect(() => prepareSandbox({ ...bwrap, writable: ["relative/dir", "/no/such/dir"] }, recordingLogger().logger, succeeds)).toThrow(
      "repl.sandbox.read_only/writable: relative/dir, /no/such/dir are not existing absolute paths",
    );
  });
});

describe("prepareSandbox, mode none", () => {
  it("warns that Lean runs unconfined, and wraps the command in prlimit and unshare where the host allows them", () => {
    const { logger, lines } = recordingLogger();
    const sandbox = prepareSandbox({ ...none, limits: { address_space_mb: 12288, file_size_mb: 1, processes: 64 } }, logger, succeeds);
    expect(sandbox.wrap(spec)).toEqual([
      "prlimit",
      "--core=0",
      "--fsize=1048576",
      `--as=${12288 * 1024 * 1024}`,
      "--nproc=64",
      "--",
      "unshare",
      "--net",
      "--",
      ...spec.command,
    ]);
    expect(lines.join("\n")).toContain("repl.sandbox.mode is none: Lean runs as the verifier's user");
  });

  it("sets no address-space or process cap unless configured (they would count the whole user's processes)", () => {
    const sandbox = prepareSandbox({ ...none, network: "allow" }, recordingLogger().logger, succeeds);
    expect(sandbox.wrap(spec)).toEqual(["prlimit", "--core=0", "--fsize=1073741824", "--", ...spec.command]);
  });

  it("tries a user namespace when a plain network namespace is refused", () => {
    const sandbox = prepareSandbox(none, recordingLogger().logger, (argv) => ({
      ok: argv[0] === "prlimit" || argv.includes("--map-current-user"),
      stderr: "",
    }));
    expect(sandbox.wrap(spec).slice(4)).toEqual(["unshare", "--user", "--map-current-user", "--net", "--", ...spec.command]);
  });

  it("runs workers unconfined, with a warning for each missing piece, where the host allows nothing", () => {
    const { logger, lines } = recordingLogger();
    const sandbox = prepareSandbox(none, logger, fails);
    expect(sandbox.wrap(spec)).toEqual(spec.command);
    expect(sandbox.enforced).toEqual([]);
    expect(lines.join("")).toContain("REPL workers run WITH network access");
    expect(lines.join("")).toContain("prlimit is not available");
  });
});

describe("workerEnvironment", () => {
  const source = {
    PATH: "/bin",
    HOME: "/home/u",
    ELAN_HOME: "/usr",
    AWS_SECRET_ACCESS_KEY: "x",
    LEANGRPO_SERVER__AUTH__TOKEN: "t",
    TMPDIR: "/tmp",
  };

  it("passes only Lean's and the locale's variables, the extras, and a private TMPDIR", () => {
    expect(workerEnvironment(source, { LEAN_NUM_THREADS: "1" }, "/tmp/w0")).toEqual({
      PATH: "/bin",
      HOME: "/home/u",
      ELAN_HOME: "/usr",
      LEAN_NUM_THREADS: "1",
      TMPDIR: "/tmp/w0",
      TMP: "/tmp/w0",
      TEMP: "/tmp/w0",
    });
  });

  it("with bubblewrap, HOME is the private directory (the real one is not in the sandbox)", () => {
    expect(workerEnvironment(source, {}, "/tmp/w0", "bwrap")).toMatchObject({ HOME: "/tmp/w0", ELAN_HOME: "/usr", TMPDIR: "/tmp/w0" });
  });
});

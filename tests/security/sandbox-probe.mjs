// What a proof's code would try from inside a REPL worker or a replay check, as a
// process of its own: read other processes' environments (the verifier's holds its
// tokens), other sandboxes' directories, write outside its own directory, reach the
// network. Used by the REPL stand-in (sandbox-repl.mjs) and the checker stand-in
// (sandbox-checker.mjs); each returns what happened, for the test to judge.
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";

/** "read" with the first bytes, or the error code. */
function tryRead(path) {
  try {
    if (statSync(path).isDirectory()) return `listed:${readdirSync(path).join(",")}`;
    return `read:${readFileSync(path, "utf8").slice(0, 200)}`;
  } catch (error) {
    return `error:${error.code ?? error.message}`;
  }
}

function tryWrite(path) {
  try {
    writeFileSync(path, `written by ${process.pid}\n`);
    return "written";
  } catch (error) {
    return `error:${error.code ?? error.message}`;
  }
}

function tryConnect(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port, timeout: 2000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve("error:timeout");
    });
    socket.once("error", (error) => resolve(`error:${error.code ?? error.message}`));
  });
}

/**
 * Probes `paths` (read), writes a marker in its TMPDIR, in the host's /tmp and in its
 * working directory, connects to `port` on loopback, and reports.
 */
export async function probe(paths, port) {
  const own = process.env.TMPDIR ?? "";
  const marker = join(own, `marker-${process.pid}`);
  const report = {
    uid: process.getuid(),
    pid: process.pid,
    ppid: process.ppid,
    tmpdir: own,
    marker,
    envNames: Object.keys(process.env).sort(),
    selfEnviron: tryRead("/proc/self/environ"),
    pids: readdirSync("/proc").filter((name) => /^\d+$/.test(name)),
    reads: Object.fromEntries(paths.map((path) => [path, tryRead(path)])),
    // Its own directory; /tmp (the host's, unless the sandbox gives it its own); its working directory.
    writes: {
      own: tryWrite(marker),
      tmp: tryWrite(`/tmp/escape-${process.pid}`),
      cwd: tryWrite(join(process.cwd(), `escape-${process.pid}`)),
    },
    network: port === undefined ? "not tried" : await tryConnect(port),
  };
  if (process.env.PROBE_LOG) appendFileSync(process.env.PROBE_LOG, `${JSON.stringify(report)}\n`);
  return report;
}

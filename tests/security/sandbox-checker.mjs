// A replay checker stand-in (comparator's interface: `<command> comparator.json` in a
// check directory) that attacks its sandbox: it runs sandbox-probe.mjs on the paths in
// PROBE_PATHS (JSON), writes the report to PROBE_LOG when that file is reachable, and
// ends as comparator does on a failure, with the report as the exception (the only
// channel the verifier reads back).
import { probe } from "./sandbox-probe.mjs";

const report = await probe(JSON.parse(process.env.PROBE_PATHS ?? "[]"), undefined);
// Compact: the verifier keeps the exception's first 500 characters.
const brief = { uid: report.uid, pids: report.pids, reads: Object.values(report.reads), writes: report.writes };
process.stderr.write(`uncaught exception: ${JSON.stringify(brief)}\n`);
process.exit(1);

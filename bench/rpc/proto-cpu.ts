// PROTOTYPE: server CPU per call, alternating servers.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
const here = fileURLToPath(new URL(".", import.meta.url));
const seconds = Number(process.argv[2] ?? 3); const rounds = Number(process.argv[3] ?? 2);
const specs = JSON.parse(process.argv[4] ?? '[["grpcJs","grpc-js-server.ts"],["kit","kit-server.ts"]]') as string[][];
function node(script: string, args: string[] = []): ChildProcess { return spawn(process.execPath, ["--import", "tsx", `${here}${script}`, ...args], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, LOG_LEVEL: "warn", OTEL_EXPORTER_OTLP_ENDPOINT: "" } }); }
async function firstLine(child: ChildProcess) { let b = ""; for await (const c of child.stdout!) { b += c; const i = b.indexOf("\n"); if (i >= 0) return b.slice(0, i).trim(); } throw new Error("exit"); }
const cpu = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" "); return (Number(f[11]) + Number(f[12])) * 10; };
const servers = [] as { name: string; child: ChildProcess; port: string }[];
for (const [name, script, ...args] of specs) { const child = node(script!, args); servers.push({ name: name!, child, port: await firstLine(child) }); }
const res = new Map<string, { calls: number; cpuMs: number; cps: number[] }>();
for (let r = 0; r < rounds; r++) for (const c of [1, 16, 64]) { const order = r % 2 ? [...servers].reverse() : servers; for (const s of order) { const l = node("load.ts", [`127.0.0.1:${s.port}`, String(c), String(seconds), "0"]); const c0 = cpu(s.child.pid!); const j = JSON.parse(await firstLine(l)); const c1 = cpu(s.child.pid!); await once(l, "exit"); const k = `${s.name}/${c}`; const e = res.get(k) ?? { calls: 0, cpuMs: 0, cps: [] }; e.calls += j.calls; e.cpuMs += c1 - c0; e.cps.push(j.callsPerSecond); res.set(k, e); } }
for (const s of servers) s.child.kill("SIGTERM");
for (const c of [1, 16, 64]) console.log(c, servers.map((s) => { const e = res.get(`${s.name}/${c}`)!; return `${s.name} ${Math.round(e.cps.reduce((a, b) => a + b) / e.cps.length)}/s cpu ${((e.cpuMs * 1000) / e.calls).toFixed(0)}us/call`; }).join("  |  "));
process.exit(0);

// PROTOTYPE: alternate N servers under the same load.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
const here = fileURLToPath(new URL(".", import.meta.url));
const seconds = Number(process.argv[2] ?? 3); const rounds = Number(process.argv[3] ?? 2);
const specs = JSON.parse(process.argv[4] ?? '[["grpcJs","grpc-js-server.ts"],["proto","proto-grpcjs-kit.ts","full"]]') as string[][];
function node(script: string, args: string[] = []): ChildProcess { return spawn(process.execPath, ["--import", "tsx", `${here}${script}`, ...args], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, LOG_LEVEL: "warn", OTEL_EXPORTER_OTLP_ENDPOINT: "" } }); }
async function firstLine(child: ChildProcess) { let b = ""; for await (const c of child.stdout!) { b += c; const i = b.indexOf("\n"); if (i >= 0) return b.slice(0, i).trim(); } throw new Error("exit"); }
const servers = [] as { name: string; child: ChildProcess; port: string }[];
for (const [name, script, ...args] of specs) { const child = node(script!, args); servers.push({ name: name!, child, port: await firstLine(child) }); }
const res = new Map<string, number[]>();
for (let r = 0; r < rounds; r++) for (const c of [1, 16, 64]) { const order = r % 2 ? [...servers].reverse() : servers; for (const s of order) { const l = node("load.ts", [`127.0.0.1:${s.port}`, String(c), String(seconds), "1"]); const j = JSON.parse(await firstLine(l)); await once(l, "exit"); const k = `${s.name}/${c}`; res.set(k, [...(res.get(k) ?? []), j.callsPerSecond, j.p99Ms]); } }
for (const s of servers) s.child.kill("SIGTERM");
for (const c of [1, 16, 64]) console.log(c, servers.map((s) => { const v = res.get(`${s.name}/${c}`)!; const cps = v.filter((_, i) => i % 2 === 0); const p99 = v.filter((_, i) => i % 2 === 1); return `${s.name} ${Math.round(cps.reduce((a, b) => a + b) / cps.length)}/s p99 ${(p99.reduce((a, b) => a + b) / p99.length).toFixed(1)}`; }).join("  |  "));
process.exit(0);

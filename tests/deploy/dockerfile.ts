// Reads a Dockerfile into stages and checks what one image target is built from:
// the only stage that sees the build context is `prune`, and a service's image gets
// its files from that stage's /out/<service>/ cut (deploy/docker/prune.sh) and nothing
// else. Used by tests/deploy/images.spec.ts; the checks return problems, not throw,
// so a test can show that they fail on a broken Dockerfile.

export interface Instruction {
  keyword: string;
  /** The text after the keyword, continuation lines joined. */
  args: string;
}

export interface Stage {
  /** The stage's name (AS ...), or its index when it has none. */
  name: string;
  /** The image or stage it starts FROM. */
  base: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  // Comment lines (and parser directives) go, also inside a continued instruction;
  // a trailing backslash continues the instruction on the next line.
  const logical: string[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(pending + line);
    pending = "";
  }
  if (pending !== "") logical.push(pending);

  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const keyword = match[1]!.toUpperCase();
    const args = match[2]!.trim();
    if (keyword === "FROM") {
      const from = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!from) throw new Error(`cannot read FROM ${args}`);
      stages.push({ name: from[2] ?? String(stages.length), base: from[1]!, instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)!.instructions.push({ keyword, args });
    }
  }
  return stages;
}

export interface Copy {
  from?: string;
  sources: string[];
  destination: string;
}

/** A COPY's --from, sources and destination (shell form; other flags are skipped). */
export function parseCopy(args: string): Copy {
  const words = args.split(/\s+/);
  let from: string | undefined;
  const paths: string[] = [];
  for (const word of words) {
    if (word.startsWith("--from=")) from = word.slice("--from=".length);
    else if (!word.startsWith("--")) paths.push(word);
  }
  const destination = paths.pop() ?? "";
  return { ...(from === undefined ? {} : { from }), sources: paths, destination };
}

/** The JSON (exec) form of CMD / ENTRYPOINT / HEALTHCHECK CMD, or undefined. */
export function execForm(args: string): string[] | undefined {
  const json = args.slice(args.indexOf("["));
  if (!json.startsWith("[")) return undefined;
  return JSON.parse(json) as string[];
}

/** The stages a target is built from: its FROM chain and every COPY --from, transitively. */
export function stagesOf(stages: Stage[], target: string): Stage[] {
  const byName = new Map(stages.map((s) => [s.name, s]));
  const seen = new Set<string>();
  const visit = (name: string) => {
    const stage = byName.get(name);
    if (!stage || seen.has(name)) return;
    seen.add(name);
    visit(stage.base);
    for (const i of stage.instructions) {
      if (i.keyword === "COPY") {
        const from = parseCopy(i.args).from;
        if (from !== undefined) visit(from);
      }
    }
  };
  visit(target);
  return stages.filter((s) => seen.has(s.name));
}

/** What a stage starts FROM, then what that starts FROM, ..., ending with an image. */
export function baseChain(stages: Stage[], target: string): string[] {
  const byName = new Map(stages.map((s) => [s.name, s]));
  const chain: string[] = [];
  for (let stage = byName.get(target); stage && !chain.includes(stage.base); stage = byName.get(stage.base)) {
    chain.push(stage.base);
  }
  return chain;
}

/** The last value of an instruction in a stage or the stages it derives FROM. */
export function inherited(stages: Stage[], target: string, keyword: string): string | undefined {
  const byName = new Map(stages.map((s) => [s.name, s]));
  for (let stage = byName.get(target); stage; stage = byName.get(stage.base)) {
    const found = stage.instructions.filter((i) => i.keyword === keyword).at(-1);
    if (found) return found.args;
  }
  return undefined;
}

export interface ImageExpectation {
  /** The service whose image this target is. */
  service: string;
  /** The stage name of the target; default: the last stage (what a plain `docker build` makes). */
  target?: string;
  port: number;
}

/** The services whose images hold the shipped model (deploy/k8s/base/config names it). */
const MODEL_SERVICES = new Set(["inference", "learner"]);

/**
 * What is wrong with how `target` gets its files and starts, as sentences; empty
 * when it holds only `service`'s pruned cut (plus its config file) and starts the
 * service compiled from its server.ts (services/<service>/dist/server.mjs) with
 * /etc/lean-grpo/<service>.yaml.
 */
export function imageProblems(text: string, expected: ImageExpectation): string[] {
  const { service, port } = expected;
  const problems: string[] = [];
  const stages = parseDockerfile(text);
  const target = expected.target ?? stages.at(-1)?.name ?? "";
  if (!stages.some((s) => s.name === target)) return [`no stage ${target}`];
  const used = stagesOf(stages, target);
  const config = `/etc/lean-grpo/${service}.yaml`;

  for (const stage of used) {
    for (const i of stage.instructions) {
      if (i.keyword === "ADD") problems.push(`${stage.name}: ADD ${i.args} (use COPY from the prune stage)`);
      if (i.keyword !== "COPY") continue;
      const copy = parseCopy(i.args);
      if (copy.from === undefined) {
        // From the build context: the whole repository in `prune` only, else the
        // service's own config file.
        const ownConfig =
          copy.sources.length === 1 && copy.sources[0] === `deploy/k8s/base/config/${service}.yaml` && copy.destination === config;
        // The services that load the model get the shipped one (the CPU default), nothing else of the repository.
        const shippedModel =
          MODEL_SERVICES.has(service) &&
          copy.sources.length === 1 &&
          copy.sources[0] === "models/arith-tiny" &&
          copy.destination === "/app/models/arith-tiny";
        // The orchestrator gets the shipped datasets under its data_root.
        const shippedData =
          service === "orchestrator" &&
          copy.sources.length === 1 &&
          copy.sources[0] === "examples/*.jsonl" &&
          copy.destination === "/data/examples/";
        // The Lean verifier's entry point (deploy/docker/unmask-proc.sh, for its sandbox under Compose).
        const entryScript =
          service === "verifier" &&
          copy.sources.length === 1 &&
          copy.sources[0] === "deploy/docker/unmask-proc.sh" &&
          copy.destination === "/usr/local/bin/unmask-proc";
        if (stage.name !== "prune" && !ownConfig && !shippedModel && !shippedData && !entryScript) {
          problems.push(`${stage.name}: COPY ${i.args} takes files from the build context`);
        }
      } else if (copy.from === "prune") {
        for (const source of copy.sources) {
          if (!source.startsWith(`/out/${service}/`)) {
            problems.push(`${stage.name}: COPY ${i.args} takes ${source}, not ${service}'s cut /out/${service}/`);
          }
        }
      } else if (!stages.some((s) => s.name === copy.from)) {
        problems.push(`${stage.name}: COPY --from=${copy.from} takes files from another image`);
      }
    }
  }
  for (const stage of used) {
    if (stage.name !== "prune" && baseChain(stages, stage.name).includes("prune")) {
      problems.push(`${stage.name} derives FROM prune, so it holds the whole build context`);
    }
  }
  const prune = used.find((s) => s.name === "prune");
  const cut = `sh deploy/docker/prune.sh ${service} /out/${service}`;
  if (!prune) problems.push("no prune stage");
  else if (!prune.instructions.some((i) => i.keyword === "RUN" && i.args.includes(cut))) {
    problems.push(`prune stage does not run \`${cut}\``);
  }

  const entrypoint = inherited(stages, target, "ENTRYPOINT");
  const command = [
    ...(entrypoint === undefined ? [] : (execForm(entrypoint) ?? ["<shell form>"])),
    ...(execForm(inherited(stages, target, "CMD") ?? "") ?? ["<no exec-form CMD>"]),
  ];
  // The service compiled to JavaScript (deploy/docker/bundle-service.mjs), not TypeScript through tsx.
  const start = [`services/${service}/dist/server.mjs`, "--config", config];
  const tail = command.slice(-start.length);
  if (JSON.stringify(tail) !== JSON.stringify(start)) {
    problems.push(`starts ${JSON.stringify(command)}, not ${JSON.stringify(start)}`);
  }
  const user = inherited(stages, target, "USER");
  if (user !== "65532:65532" && user !== "65532") problems.push(`runs as ${user ?? "root"}, not 65532`);
  const exposed = inherited(stages, target, "EXPOSE");
  if (exposed !== String(port)) problems.push(`exposes ${exposed}, not ${port}`);
  const health = execForm(inherited(stages, target, "HEALTHCHECK") ?? "") ?? [];
  if (!health.includes(`services/${service}/dist/health-probe.mjs`) || !health.includes(`127.0.0.1:${port}`)) {
    problems.push(`health check ${JSON.stringify(health)} does not probe 127.0.0.1:${port} with the kit's compiled health probe`);
  }
  const bundle = `node deploy/docker/bundle-service.mjs ${service}`;
  if (!used.some((stage) => stage.instructions.some((i) => i.keyword === "RUN" && i.args.includes(bundle)))) {
    problems.push(`no stage runs \`${bundle}\`: the image would have no compiled service`);
  }
  return problems;
}

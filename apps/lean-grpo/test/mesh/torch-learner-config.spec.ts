// The `torch` section's zod schema (torch-learner-config.ts, what the config reference and
// `lean-grpo train`'s pre-flight read) against the PyTorch learner's own (leangrpo_learner/
// config.py, what the learner checks when it starts): the same keys, the same defaults, and
// every value one accepts the other accepts too. Needs only python3 (config.py imports no torch).
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { schemaKeys } from "@lean-grpo/kit";
import { TorchSectionSchema } from "../../src/mesh/torch-learner-config.js";
import { TORCH_LEARNER_PACKAGE_DIR } from "../../src/mesh/torch-learner-process.js";

const PYTHON = "/usr/bin/python3";
const hasPython = spawnSync(PYTHON, ["-c", "pass"]).status === 0;
if (!hasPython) console.warn(`skipping the torch section's parity with config.py: no ${PYTHON}`);

/** Runs each probe {key, value} through config.py's validator of torch.<key>: the value it returns, or the error. */
function pythonVerdicts(probes: { key: string; value: unknown }[]): { ok: boolean; value?: unknown; error?: string }[] {
  const script = `
import json, sys
from leangrpo_learner.config import SCHEMA, ConfigError
out = []
for probe in json.loads(sys.stdin.read()):
    check, _default = SCHEMA["torch"][probe["key"]]
    try:
        out.append({"ok": True, "value": check("torch." + probe["key"], probe["value"])})
    except ConfigError as error:
        out.append({"ok": False, "error": str(error)})
print(json.dumps(out))
`;
  const run = spawnSync(PYTHON, ["-c", script], {
    cwd: TORCH_LEARNER_PACKAGE_DIR,
    input: JSON.stringify(probes),
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`python3 failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as { ok: boolean; value?: unknown; error?: string }[];
}

describe("services.learner.torch: the zod schema and the PyTorch learner's", () => {
  it.skipIf(!hasPython)("have the same keys and defaults", () => {
    const run = spawnSync(
      PYTHON,
      ["-c", "import json\nfrom leangrpo_learner.config import SCHEMA\nprint(json.dumps({k: v[1] for k, v in SCHEMA['torch'].items()}))"],
      { cwd: path.resolve(TORCH_LEARNER_PACKAGE_DIR), encoding: "utf8" },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(TorchSectionSchema.parse({})).toEqual(JSON.parse(run.stdout));
  });

  it.skipIf(!hasPython)("accept and refuse the same values", () => {
    const probes: { key: string; value: unknown }[] = [];
    for (const k of schemaKeys(TorchSectionSchema)) {
      const values: unknown[] = [...(k.choices ?? []), "bogus", -1, 0, 1, 65537, 1.5, true, null];
      for (const value of values) probes.push({ key: k.path, value });
    }
    const verdicts = pythonVerdicts(probes);
    const field = (key: string) => (TorchSectionSchema.shape as Record<string, z.ZodType>)[key]!;
    const disagreements = probes.flatMap((probe, i) => {
      const zod = z.safeParse(field(probe.key), probe.value).success;
      return zod === verdicts[i]!.ok
        ? []
        : [`torch.${probe.key} = ${JSON.stringify(probe.value)}: zod ${zod}, config.py ${verdicts[i]!.ok}`];
    });
    expect(disagreements).toEqual([]);
    // The probes reach both sides of every key: each has a value it takes and one it refuses.
    for (const k of schemaKeys(TorchSectionSchema)) {
      const mine = probes.map((p, i) => [p, verdicts[i]!] as const).filter(([p]) => p.key === k.path);
      expect(mine.some(([, v]) => v.ok) && mine.some(([, v]) => !v.ok), k.path).toBe(true);
    }
  });
});

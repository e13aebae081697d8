// The `logging:` section of `lean-grpo train`: experiment tracking with the names seed 003
// (logging.enabled | project | entity | mode, exp_name) and TRL (report_to) give it.
// A run sends nothing anywhere unless asked: tracking is on when logging.enabled is true,
// or when any other logging.* key is given and enabled is not (seed 003's default is on).
import { z } from "zod";

export const TRACKERS = ["wandb", "tensorboard"] as const;
export type TrackerName = (typeof TRACKERS)[number];
export const WANDB_MODES = ["online", "offline", "disabled"] as const;

export const TrackingSchema = z
  .object({
    /** Unset: on when another logging.* key is given (seed 003 logs by default), else off. */
    enabled: z.boolean().optional(),
    /** Trackers, as TRL's report_to: a list, one name, "all" or "none". */
    report_to: z
      .union([z.array(z.enum(TRACKERS)), z.enum([...TRACKERS, "all", "none"])])
      .default(["wandb"])
      .transform((v): TrackerName[] => (v === "all" ? [...TRACKERS] : v === "none" ? [] : typeof v === "string" ? [v] : [...new Set(v)])),
    /** W&B project (seed 003's default). */
    project: z.string().min(1).default("rlvr-vocab"),
    /** W&B user or team; unset: the API key's default entity. */
    entity: z.string().min(1).optional(),
    /** online: sent as the run goes; offline: written under the run directory to upload later; disabled: W&B off. */
    mode: z.enum(WANDB_MODES).default("online"),
    /** The run's display name; unset: exp_name, else the run id. */
    name: z.string().min(1).optional(),
    /** W&B server; unset: WANDB_BASE_URL, else https://api.wandb.ai. */
    base_url: z.url().optional(),
  })
  .strict()
  .prefault({});

export type TrackingSection = z.output<typeof TrackingSchema>;

export interface TrackingConfig {
  trackers: TrackerName[];
  project: string;
  entity?: string;
  mode: (typeof WANDB_MODES)[number];
  name?: string;
  baseUrl: string;
}

/** Which trackers a run uses; `keysGiven`: some logging.* key was set by a source. */
export function resolveTracking(section: TrackingSection, keysGiven: boolean, env: NodeJS.ProcessEnv = process.env): TrackingConfig {
  const enabled = section.enabled ?? keysGiven;
  const trackers = !enabled ? [] : section.report_to.filter((t) => t !== "wandb" || section.mode !== "disabled");
  return {
    trackers,
    project: section.project,
    ...(section.entity ? { entity: section.entity } : {}),
    mode: section.mode,
    ...(section.name ? { name: section.name } : {}),
    baseUrl: (section.base_url ?? env.WANDB_BASE_URL ?? "https://api.wandb.ai").replace(/\/+$/, ""),
  };
}

// The W&B API that W&B's own clients use to log a run (the official JavaScript SDK,
// wandb/wandb-js src/internal/api.ts and filestream.ts, and the Python SDK): a GraphQL
// `upsertBucket` mutation creates the run with its config, then POSTs to
// /files/<entity>/<project>/<run>/file_stream append history rows (wandb-history.jsonl, by
// offset) and replace the summary (wandb-summary.json); `complete` ends the run. The API key
// goes as HTTP Basic auth, user "api". Every request has a deadline: a slow server costs a
// warning, never the run.
const TIMEOUT_MS = 10_000;

export interface WandbRunRef {
  entity: string;
  project: string;
  name: string;
}

const UPSERT_BUCKET = `mutation UpsertBucket($id: String, $name: String, $project: String, $entity: String, $displayName: String, $config: JSONString, $host: String, $jobType: String) {
  upsertBucket(input: {id: $id, name: $name, modelName: $project, entityName: $entity, displayName: $displayName, config: $config, host: $host, jobType: $jobType}) {
    bucket { id name displayName project { id name entity { id name } } }
    inserted
  }
}`;

const VIEWER = "query Viewer { viewer { id entity } }";

export class WandbApi {
  private historyOffset = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  /** Creates (or updates) the run; the entity defaults to the API key's own. */
  async upsertRun(run: {
    name: string;
    project: string;
    entity?: string;
    displayName: string;
    config: Record<string, unknown>;
  }): Promise<WandbRunRef> {
    const entity = run.entity ?? (await this.defaultEntity());
    // W&B's config format: each key's value under "value".
    const config = Object.fromEntries(Object.entries(run.config).map(([k, v]) => [k, { value: v, desc: null }]));
    const data = await this.graphql<{
      upsertBucket?: { bucket?: { name: string; project?: { name: string; entity?: { name: string } } } };
    }>(UPSERT_BUCKET, {
      name: run.name,
      project: run.project,
      entity,
      displayName: run.displayName,
      config: JSON.stringify(config),
      jobType: "train",
    });
    const bucket = data.upsertBucket?.bucket;
    if (!bucket) throw new Error("W&B did not create the run (upsertBucket returned no bucket)");
    return { entity: bucket.project?.entity?.name ?? entity, project: bucket.project?.name ?? run.project, name: bucket.name };
  }

  /** Appends history rows and sets the summary. */
  async log(ref: WandbRunRef, rows: Record<string, unknown>[], summary: Record<string, unknown>): Promise<void> {
    await this.fileStream(ref, {
      files: {
        "wandb-history.jsonl": { offset: this.historyOffset, content: rows.map((r) => JSON.stringify(r)) },
        "wandb-summary.json": { offset: 0, content: [JSON.stringify(summary)] },
      },
    });
    this.historyOffset += rows.length;
  }

  async finish(ref: WandbRunRef, exitCode: number): Promise<void> {
    await this.fileStream(ref, { complete: true, exitcode: exitCode });
  }

  private async defaultEntity(): Promise<string> {
    const data = await this.graphql<{ viewer?: { entity?: string } }>(VIEWER, {});
    if (!data.viewer?.entity) throw new Error("W&B did not name the API key's entity; set logging.entity");
    return data.viewer.entity;
  }

  private async graphql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    const body = (await this.post("/graphql", { query, variables })) as { data?: T; errors?: { message: string }[] };
    if (body.errors?.length) throw new Error(`W&B GraphQL: ${body.errors.map((e) => e.message).join("; ")}`);
    return body.data ?? ({} as T);
  }

  private fileStream(ref: WandbRunRef, payload: unknown): Promise<unknown> {
    const at = [ref.entity, ref.project, ref.name].map(encodeURIComponent).join("/");
    return this.post(`/files/${at}/file_stream`, payload);
  }

  private async post(route: string, payload: unknown): Promise<unknown> {
    const response = await fetch(this.baseUrl + route, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Authorization: `Basic ${Buffer.from(`api:${this.apiKey}`).toString("base64")}`,
      },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`W&B ${route} answered HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`);
    const text = await response.text();
    return text ? (JSON.parse(text) as unknown) : {};
  }
}

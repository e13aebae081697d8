// What goes wrong while loading config, with enough context to fix it: which
// key, which source set it, and what would have been accepted.

export interface ConfigIssue {
  /** Dotted key path, "" for a problem with a whole source (a file that does not parse). */
  path: string;
  /** Where the offending value came from: "file x.yaml", "env LEANGRPO_X", "flag --x", "override a.b=c" or "default". */
  source: string;
  /** One self-contained line, naming the key, the source and what is accepted. */
  message: string;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly issues: ConfigIssue[];

  constructor(issues: ConfigIssue[]) {
    super(issues.map((issue) => issue.message).join("\n"));
    this.issues = issues;
  }
}

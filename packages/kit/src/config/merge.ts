// Layered merge of config sources. Plain objects merge key by key; arrays and
// scalars replace. Alongside the value it remembers which source set each key
// last, so an error can say where a bad value came from.

export type PlainObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is PlainObject {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Defines an own property, so a key named "__proto__" cannot reach Object.prototype. */
function setOwn(target: PlainObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function getOwn(target: PlainObject, key: string): unknown {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

/** A new object: `over` merged onto `base`, neither modified. */
export function deepMerge(base: PlainObject, over: PlainObject): PlainObject {
  const out: PlainObject = {};
  for (const [key, value] of Object.entries(base)) setOwn(out, key, value);
  for (const [key, value] of Object.entries(over)) {
    const current = getOwn(out, key);
    setOwn(out, key, isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value);
  }
  return out;
}

export interface Origin {
  /** "file x.yaml", "env LEANGRPO_X", ... */
  source: string;
  /** The text a string source gave, before it was parsed as YAML. */
  raw?: string;
}

export interface KeyOrigin extends Origin {
  path: string[];
}

export class MergedConfig {
  readonly value: PlainObject = {};
  /** Dotted path -> the source that set it last. Containers are recorded too. */
  readonly #origins = new Map<string, KeyOrigin>();

  /** Merges `value` in at `path`, over whatever earlier sources set. */
  set(path: readonly string[], value: unknown, origin: Origin): void {
    if (path.length === 0) {
      if (!isPlainObject(value)) throw new TypeError("only an object can be merged in at the root");
      for (const [key, child] of Object.entries(value)) this.#put(this.value, [key], child, origin);
      return;
    }
    let parent = this.value;
    for (let depth = 1; depth < path.length; depth++) {
      const prefix = path.slice(0, depth);
      const key = prefix[depth - 1]!;
      const existing = getOwn(parent, key);
      if (isPlainObject(existing)) {
        parent = existing;
        continue;
      }
      // A scalar in the way of a nested key gives way, as it would to any later source.
      this.#forget(prefix);
      const created: PlainObject = {};
      setOwn(parent, key, created);
      this.#record(prefix, { source: origin.source });
      parent = created;
    }
    this.#put(parent, [...path], value, origin);
  }

  get(path: readonly string[]): unknown {
    let node: unknown = this.value;
    for (const key of path) node = isPlainObject(node) ? getOwn(node, key) : undefined;
    return node;
  }

  /** The source of the value at `path`, or of its nearest ancestor that has one. */
  sourceOf(path: readonly (string | number)[]): string | undefined {
    for (let length = path.length; length > 0; length--) {
      const origin = this.#origins.get(path.slice(0, length).join("."));
      if (origin) return origin.source;
    }
    return undefined;
  }

  /** Keys whose current value was parsed from text, with that text. */
  parsedStrings(): (KeyOrigin & { raw: string })[] {
    return [...this.#origins.values()].filter((origin): origin is KeyOrigin & { raw: string } => origin.raw !== undefined);
  }

  #put(parent: PlainObject, path: string[], value: unknown, origin: Origin): void {
    const key = path[path.length - 1]!;
    if (!isPlainObject(value)) {
      this.#forget(path);
      setOwn(parent, key, value);
      this.#record(path, origin);
      return;
    }
    const existing = getOwn(parent, key);
    let target: PlainObject;
    if (isPlainObject(existing)) {
      target = existing;
    } else {
      this.#forget(path);
      target = {};
      setOwn(parent, key, target);
    }
    this.#record(path, origin);
    // Children carry the source but not the raw text: that belongs to the whole value.
    const childOrigin: Origin = { source: origin.source };
    for (const [childKey, child] of Object.entries(value)) this.#put(target, [...path, childKey], child, childOrigin);
  }

  #record(path: string[], origin: Origin): void {
    this.#origins.set(path.join("."), { path, source: origin.source, raw: origin.raw });
  }

  /** Drops the origins of `path` and everything under it, whose values are being replaced. */
  #forget(path: readonly string[]): void {
    const dotted = path.join(".");
    for (const key of this.#origins.keys()) {
      if (key === dotted || key.startsWith(`${dotted}.`)) this.#origins.delete(key);
    }
  }
}

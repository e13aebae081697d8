// How the page makes its elements: by the DOM, never from HTML text. A run's texts (its
// algorithm, error, prompts, completions, Lean's messages, metric names) are written by
// whoever can write in runs_dir, so they only ever become text nodes: no string reaches
// innerHTML, and the page's Content-Security-Policy (page-html.ts) makes Chromium refuse
// one that does (Trusted Types), so a slip fails loudly instead of running a stranger's markup.

type Child = Node | string;

/**
 * A new `tag` element. `attributes` are the page's own (names and values written in this
 * code); children that are strings become text, whatever they hold.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

/** A `tag` element holding `content` as text, with an optional class. */
export function textElement<K extends keyof HTMLElementTagNameMap>(tag: K, content: string, className = ""): HTMLElementTagNameMap[K] {
  return h(tag, className ? { class: className } : {}, content);
}

/**
 * A link to a file of the run: each segment of `relative` percent-encoded after `base`, so
 * no name can become a scheme (`javascript:`), another host (`//…`), a query or a fragment.
 * Empty, "." and ".." segments are dropped.
 */
export function runFileHref(base: string, relative: string): string {
  const segments = relative.split("/").filter((s) => s !== "" && s !== "." && s !== "..");
  return segments.length === 0 ? base : `${base}${segments.map(encodeURIComponent).join("/")}/`;
}

// TensorFlow.js's CPU backend prints a multi-line "install our node backend" banner on first
// use in every thread that loads it (the embedded sampler, the learner thread, each test file).
// It is advice, not a warning about this run: drop exactly that message and let every other
// console.warn through. Installed once per thread by tensor-backend.ts, where the CPU backend
// is registered (not tf.enableProdMode(), which would also hide real warnings).
const BANNER = /^\s*=+\s*Hi, looks like you are running TensorFlow\.js in Node\.js/;

/** `warn`, minus the banner. */
export function withoutTfjsBanner(warn: (...args: unknown[]) => void): (...args: unknown[]) => void {
  return (...args: unknown[]) => {
    if (typeof args[0] === "string" && BANNER.test(args[0])) return;
    warn(...args);
  };
}

let installed = false;

/** Filters this thread's console.warn (once). */
export function filterTfjsBanner(): void {
  if (installed) return;
  installed = true;
  console.warn = withoutTfjsBanner(console.warn.bind(console));
}

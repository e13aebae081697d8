// TensorFlow.js's CPU backend prints a multi-line "install our node backend" banner on first
// use in every thread that loads it (the embedded sampler, the learner thread, each test file).
// It is advice, not a warning about this run: drop exactly that message and let every other
// console.warn through.
const BANNER = /^\s*=+\s*Hi, looks like you are running TensorFlow\.js in Node\.js/;

let installed = false;

export function filterTfjsBanner(): void {
  if (installed) return;
  installed = true;
  const warn = console.warn.bind(console);
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === "string" && BANNER.test(args[0])) return;
    warn(...args);
  };
}

// One measurement of bench/data (main.ts runs it in a fresh process per file, so each peak RSS
// is the reader's own): open a training set as StartRun does, read the first step's batch
// (seeded order, 64 records), then 5 more batches, and print JSON: time to the first batch,
// time for the rest, and the process's peak RSS.
// Usage: npx tsx bench/data/first-batch.ts DIR FILE [MAX_DATASET_BYTES]
import { PathRoot } from "@lean-grpo/kit";
import { AUTO_DATASET_OPTIONS as AUTO_OPTIONS, DataOrder, openTrainingSet, rootDatasetPlace as rootPlace } from "@lean-grpo/orchestrator";

const [dir, file, maxBytesArg] = process.argv.slice(2);
const maxBytes = Number(maxBytesArg ?? 256 * 1024 * 1024);
const BATCH = 64;
const NEXT_BATCHES = 5;
// Peak RSS sampled here: getrusage's maxrss survives exec, so it would report the parent's peak.
let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 10);
const t0 = performance.now();
const set = await openTrainingSet(
  rootPlace(new PathRoot({ dir: dir!, key: "data_root" }), "dataset_path"),
  file!,
  { ...AUTO_OPTIONS, header: "import Mathlib" },
  {
    maxBytes,
    maxTrainSamples: null,
  },
);
const order = new DataOrder(set.size, 42);
const first = await set.at(order.batch(1, BATCH));
const firstBatchMs = performance.now() - t0;
const t1 = performance.now();
let read = first.length;
for (let step = 2; step <= 1 + NEXT_BATCHES; step++) read += (await set.at(order.batch(step, BATCH))).length;
const moreBatchesMs = performance.now() - t1;
peakRss = Math.max(peakRss, process.memoryUsage.rss());
clearInterval(sampler);
await set.close();
console.log(
  JSON.stringify({
    file,
    records: set.size,
    streamed: set.streamed,
    first_batch_ms: Math.round(firstBatchMs),
    next_5_batches_ms: Math.round(moreBatchesMs),
    records_read: read,
    peak_rss_mib: Math.round(peakRss / 2 ** 20),
  }),
);

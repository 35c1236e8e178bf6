// A worker for the lane tests: `work` holds the thread for `ms` (as an inference run does) and
// answers its label; `log` answers the labels in the order they were served.
import { serveWorker } from "../../src/platform/ml/worker-client";

const served: string[] = [];

serveWorker({
  init: () => null,
  work({ label, ms }: { label: string; ms: number }) {
    const until = performance.now() + ms;
    while (performance.now() < until);
    served.push(label);
    return label;
  },
  log: () => served,
});

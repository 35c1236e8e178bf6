// A worker for the lane tests: `work` holds the thread for `ms` (as an inference run does) and
// answers its label; `wait` takes `ms` without holding the thread (as a model load awaits its
// files); `status` answers at once; `log` answers the labels in the order they were served.
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
  async wait({ label, ms }: { label: string; ms: number }) {
    await Bun.sleep(ms);
    served.push(label);
    return label;
  },
  status: () => ({ state: "ok", served: served.length }),
  log: () => served,
});

// Requests waiting for one inference worker, taken in turns between lanes (a workspace, or search
// queries): a lane with a long backlog holds back another lane's request by at most the request in
// progress, never by its whole backlog.

/** Lanes remembered with nothing waiting, past which the idle ones are forgotten. */
const MAX_REMEMBERED = 64;

export function createLaneQueue<T>() {
  const waiting = new Map<string, T[]>();
  /** The turn at which each lane was last served; a lane never served (or forgotten) goes first. */
  const served = new Map<string, number>();
  let turn = 0;
  let size = 0;

  return {
    get size() {
      return size;
    },

    push(lane: string, item: T) {
      const items = waiting.get(lane);
      if (items) items.push(item);
      else waiting.set(lane, [item]);
      size++;
    },

    /** The next item of the lane served longest ago; ties go to the lane that started waiting first. */
    shift(): T | undefined {
      let next: string | undefined;
      let nextTurn = Infinity;
      for (const lane of waiting.keys()) {
        const t = served.get(lane) ?? -1;
        if (t < nextTurn) [next, nextTurn] = [lane, t];
      }
      if (next === undefined) return undefined;
      const items = waiting.get(next)!;
      const item = items.shift()!;
      if (items.length === 0) waiting.delete(next);
      size--;
      served.set(next, turn++);
      if (served.size > MAX_REMEMBERED) for (const lane of served.keys()) if (!waiting.has(lane)) served.delete(lane);
      return item;
    },

    /** Removes and returns everything still waiting. */
    clear(): T[] {
      const all = [...waiting.values()].flat();
      waiting.clear();
      size = 0;
      return all;
    },
  };
}

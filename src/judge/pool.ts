/**
 * A concurrency-limited pool: at most `limit` tasks run at once, the rest wait in FIFO order. It measures how busy it
 * was — the time-weighted share of slots in use since the first task started — so a run can report whether its
 * concurrency was the bottleneck.
 */

export interface PoolStats {
  limit: number;
  active: number;
  queued: number;
  started: number;
  completed: number;
  failed: number;
  maxActive: number;
  /** Milliseconds from the first task's start to now (or to the last task's end when idle). */
  elapsedMs: number;
  /** Slot-milliseconds in use / (limit × elapsedMs); 1 means every slot was busy the whole time. */
  busyFraction: number;
}

export class Pool {
  readonly limit: number;
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private started = 0;
  private completed = 0;
  private failed = 0;
  private maxActive = 0;
  private firstStart?: number;
  private lastChange = 0;
  private lastEnd?: number;
  private busySlotMs = 0;

  constructor(limit: number, private readonly now: () => number = () => performance.now()) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`concurrency must be a positive integer, got ${limit}`);
    this.limit = limit;
  }

  /** Runs `task` when a slot is free; resolves or rejects with its result. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.account();
    this.active++;
    this.started++;
    this.maxActive = Math.max(this.maxActive, this.active);
    this.firstStart ??= this.lastChange;
    try {
      const r = await task();
      this.completed++;
      return r;
    } catch (e) {
      this.failed++;
      throw e;
    } finally {
      this.account();
      this.active--;
      if (this.active === 0) this.lastEnd = this.lastChange;
      // Hand the slot straight to the next waiter so the limit holds.
      this.waiting.shift()?.();
    }
  }

  /** Adds the slot-time spent since the last change of the active count. */
  private account(): void {
    const t = this.now();
    if (this.firstStart !== undefined) this.busySlotMs += this.active * (t - this.lastChange);
    this.lastChange = t;
  }

  stats(): PoolStats {
    const t = this.active > 0 ? this.now() : (this.lastEnd ?? this.now());
    const busy = this.busySlotMs + (this.active > 0 ? this.active * (t - this.lastChange) : 0);
    const elapsedMs = this.firstStart === undefined ? 0 : t - this.firstStart;
    return {
      limit: this.limit,
      active: this.active,
      queued: this.waiting.length,
      started: this.started,
      completed: this.completed,
      failed: this.failed,
      maxActive: this.maxActive,
      elapsedMs,
      busyFraction: elapsedMs > 0 ? Math.min(1, busy / (this.limit * elapsedMs)) : 0,
    };
  }
}

/**
 * Maps over an (async) iterable with at most `limit` items in flight, yielding results in input order. At most
 * `limit × 4` finished results wait for a slow earlier item, so memory stays bounded on long streams.
 */
export async function* mapOrdered<I, O>(items: Iterable<I> | AsyncIterable<I>, limit: number, fn: (item: I, index: number) => Promise<O>): AsyncGenerator<O> {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`concurrency must be a positive integer, got ${limit}`);
  const window = limit * 4;
  interface Entry {
    promise: Promise<O>;
    done: boolean;
  }
  const pending: Entry[] = [];
  const waiters: (() => void)[] = [];
  let running = 0;
  let index = 0;
  const start = (item: I): Entry => {
    running++;
    const entry = { done: false } as Entry;
    entry.promise = fn(item, index++).finally(() => {
      entry.done = true;
      running--;
      for (const wake of waiters.splice(0)) wake();
    });
    // Avoid an unhandled rejection before the consumer reaches this item.
    entry.promise.catch(() => {});
    return entry;
  };
  for await (const item of items) {
    while (pending[0]?.done) yield await pending.shift()!.promise;
    while (running >= limit || pending.length >= window) {
      if (pending[0]?.done) yield await pending.shift()!.promise;
      else await new Promise<void>((r) => waiters.push(r));
    }
    pending.push(start(item));
  }
  while (pending.length) yield await pending.shift()!.promise;
}

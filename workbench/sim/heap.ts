/**
 * A binary min-heap of (time, value) entries kept interleaved in one Float64Array (time, value,
 * time, value, …): no object per entry, and one cache line per level visited, so a million pending
 * messages cost 16 bytes each. Ties are broken by the heap's own (deterministic) structure: the
 * same pushes and pops always give the same order, which keeps a simulation reproducible.
 */
export class TimeHeap {
  private data: Float64Array;
  private count = 0;

  constructor(initialCapacity = 1024) {
    this.data = new Float64Array(2 * Math.max(16, initialCapacity));
  }

  /** How many entries are queued. */
  get size(): number {
    return this.count;
  }

  /** The smallest time queued, `Infinity` when empty. */
  peekTime(): number {
    return this.count === 0 ? Infinity : this.data[0]!;
  }

  /** The value of the entry with the smallest time (check `size` first). */
  peekValue(): number {
    return this.data[1]!;
  }

  /** Queues `value` (an integer that fits a double exactly) at `time`. */
  push(time: number, value: number): void {
    if (Number.isNaN(time)) throw new RangeError('heap time is NaN');
    if (2 * this.count === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    const d = this.data;
    let i = this.count++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = d[2 * parent]!;
      if (pt <= time) break;
      d[2 * i] = pt;
      d[2 * i + 1] = d[2 * parent + 1]!;
      i = parent;
    }
    d[2 * i] = time;
    d[2 * i + 1] = value;
  }

  /** Removes the entry with the smallest time and returns its value (check `size` first). */
  pop(): number {
    if (this.count === 0) throw new RangeError('pop from an empty heap');
    const d = this.data;
    const top = d[1]!;
    const last = --this.count;
    if (last > 0) {
      const t = d[2 * last]!;
      const v = d[2 * last + 1]!;
      let i = 0;
      const half = last >> 1;
      while (i < half) {
        let child = 2 * i + 1;
        const right = child + 1;
        if (right < last && d[2 * right]! < d[2 * child]!) child = right;
        const ct = d[2 * child]!;
        if (ct >= t) break;
        d[2 * i] = ct;
        d[2 * i + 1] = d[2 * child + 1]!;
        i = child;
      }
      d[2 * i] = t;
      d[2 * i + 1] = v;
    }
    return top;
  }
}

/**
 * Payloads too large for an event's number (the heap holds numbers only): each is kept in a slot
 * whose index the event carries, and the slot is reused once the event took it back.
 */
export class PayloadSlots<T> {
  private readonly slots: (T | undefined)[] = [];
  private readonly free: number[] = [];

  /** Stores `payload`; returns its slot. */
  put(payload: T): number {
    const index = this.free.pop();
    if (index === undefined) return this.slots.push(payload) - 1;
    this.slots[index] = payload;
    return index;
  }

  /** Takes the payload of `index` out (the slot becomes free). */
  take(index: number): T {
    const payload = this.slots[index] as T;
    this.slots[index] = undefined;
    this.free.push(index);
    return payload;
  }
}

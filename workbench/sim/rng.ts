/**
 * A small seeded pseudo-random generator (sfc32, seeded through splitmix32), so a simulation is
 * reproducible from one seed. Independent streams (latencies, jitter, failures) come from `fork`.
 */

function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** A seeded stream of uniform numbers in [0, 1). */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  /** The stream's own uniform function, bound (pass it where `() => number` is wanted). */
  readonly next: () => number;

  constructor(seed: number) {
    const mix = splitmix32(seed);
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix() | 1;
    this.next = () => this.uniform();
  }

  /** A uniform number in [0, 1). */
  uniform(): number {
    // sfc32
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** A uniform number in [min, max). */
  between(min: number, max: number): number {
    return min + (max - min) * this.uniform();
  }

  /** A uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor((max - min + 1) * this.uniform());
  }

  /** A new independent stream derived from this seed and a label number. */
  static derive(seed: number, stream: number): Rng {
    return new Rng((Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(stream + 1, 0x85ebca6b)) >>> 0);
  }
}

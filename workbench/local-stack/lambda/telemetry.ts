/**
 * Local stand-in for CloudWatch Logs and EMF metrics. In AWS the consumer's Powertools Logger and
 * Metrics write JSON lines to stdout and CloudWatch ingests them; locally the same lines go to a file
 * and EMF metric lines are aggregated in memory, so the scorecard and progress read real metrics.
 */
import { Console } from 'node:console';
import { createWriteStream, mkdirSync, writeFileSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';

/** Sum of each metric, overall and per lane dimension. */
export interface MetricTotals {
  total: Record<string, number>;
  byLane: Record<string, Record<string, number>>;
  /** Every value seen per metric (for distributions such as QueueAgeMs). */
  values: Record<string, number[]>;
}

/**
 * Starts a run's consumer log afresh (its folder made, the file emptied): each run's log holds that
 * run's lines only, as a new CloudWatch log stream would. Sinks then append to it.
 */
export function startLogFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, '');
}

/** Aggregates EMF documents (one JSON object per line) and optionally copies every line to a file. */
export class TelemetrySink {
  readonly totals: MetricTotals = { total: {}, byLane: {}, values: {} };
  private readonly file: WriteStream | undefined;
  /** Lines that were not JSON (should stay 0: everything the consumer logs is structured). */
  unstructuredLines = 0;
  /**
   * Lines that arrived after {@link close} (not written to the file): work still running after the
   * stack stopped. Counted, never thrown — a late line must not crash the run that reports.
   */
  linesAfterClose = 0;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(filePath?: string) {
    if (filePath) {
      mkdirSync(dirname(filePath), { recursive: true });
      this.file = createWriteStream(filePath, { flags: 'a' });
    }
  }

  /** Takes one output line of a Logger or Metrics instance. */
  line(text: string): void {
    if (this.closed) {
      this.linesAfterClose += 1;
      return;
    }
    this.file?.write(text.endsWith('\n') ? text : `${text}\n`);
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      this.unstructuredLines += 1;
      return;
    }
    this.takeEmf(doc);
  }

  private takeEmf(doc: unknown): void {
    if (typeof doc !== 'object' || doc === null) return;
    const record = doc as Record<string, unknown> & { _aws?: { CloudWatchMetrics?: { Metrics?: { Name: string }[] }[] } };
    const directives = record._aws?.CloudWatchMetrics;
    if (!Array.isArray(directives)) return;
    const lane = typeof record.lane === 'string' ? record.lane : 'unknown';
    for (const directive of directives) {
      for (const { Name } of directive.Metrics ?? []) {
        const raw = record[Name];
        const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is number => typeof v === 'number');
        for (const value of values) {
          this.totals.total[Name] = (this.totals.total[Name] ?? 0) + value;
          const laneTotals = (this.totals.byLane[lane] ??= {});
          laneTotals[Name] = (laneTotals[Name] ?? 0) + value;
          (this.totals.values[Name] ??= []).push(value);
        }
      }
    }
  }

  /** A `Console` whose every line goes to this sink. */
  console(): Console {
    let pending = '';
    const stream = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        pending += chunk.toString();
        let newline = pending.indexOf('\n');
        while (newline >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          if (line.trim()) this.line(line);
          newline = pending.indexOf('\n');
        }
        done();
      },
    });
    return new Console({ stdout: stream, stderr: stream });
  }

  /** Flushes and closes the file copy. */
  close(): Promise<void> {
    this.closed = true;
    const file = this.file;
    this.closing ??= file ? new Promise<void>((resolve) => file.end(() => resolve())) : Promise.resolve();
    return this.closing;
  }
}

/**
 * Points a Powertools Logger or Metrics instance at another console. Powertools keeps its console
 * private (it writes to stdout for CloudWatch); this is the one place we reach in, for local runs only.
 */
export function redirectPowertoolsConsole(instance: object, target: Console): void {
  (instance as { console: Console }).console = target;
}

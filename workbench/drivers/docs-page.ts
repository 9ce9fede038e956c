/**
 * The measured sections of the benchmark pages (docs/benchmarks/*.md). A page holds each measured table
 * between `<!-- BEGIN measured:<id> -->` and `<!-- END measured:<id> -->`; a measuring command given
 * `--write-docs` replaces what lies between the markers of its id with its run's section — the date (UTC),
 * the machine, the exact command line, its exit code and the output — once the run has finished. The
 * markers and everything outside them stay byte for byte; a page or a marker missing is an error (checked
 * before the run starts), never an append.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandIo } from '../../lib/cli/command.js';
import { RatelaneError } from '../../lib/platform/errors.js';

/** The repository's benchmark pages. */
const DOCS_DIR = fileURLToPath(new URL('../../docs/benchmarks/', import.meta.url));

/**
 * The environment variable that points the commands at another folder of pages. For tests only: they
 * write into a temporary copy of a page, never into docs/.
 */
const DOCS_DIR_ENV = 'RATELANE_BENCHMARK_DOCS';

/** A page has no section for an id (or an ambiguous one): nothing was written. */
export class MeasuredSectionError extends RatelaneError {
  override name = 'MeasuredSectionError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/** One measured section: a page of docs/benchmarks and the id of its markers. */
interface MeasuredSection {
  /** The page's file name in docs/benchmarks, e.g. `simulator.md`. */
  page: string;
  id: string;
}

/** What a measuring command was asked to write: its section, and the command line that ran. */
export interface DocsTarget {
  section: MeasuredSection;
  /** The command line ({@link commandLine}). */
  command: string;
}

/** What a finished run writes into its section. */
interface MeasuredRun {
  command: string;
  exitCode: number;
  /** When the run started. */
  started: Date;
  /** The output: {@link printedBlock}, or a markdown table ({@link markdownTable}). */
  body: string;
}

/** `npm run <name> -- <args>`: a run's command line, an argument quoted for a POSIX shell when it needs it. */
export function commandLine(name: string, argv: readonly string[]): string {
  const quote = (arg: string): string => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`);
  return argv.length === 0 ? `npm run ${name}` : `npm run ${name} -- ${argv.map(quote).join(' ')}`;
}

/** What a command printed on stdout, in a fenced block, without the `--json` line that ends it when `json`. */
export function printedBlock(printed: string, { json }: { json: boolean }): string {
  const lines = printed.replace(/\n$/, '').split('\n');
  if (json) lines.pop();
  const longest = Math.max(0, ...(printed.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [fence, ...lines, fence].join('\n');
}

/** A markdown table: the columns at `left` (default the first) aligned left, the others right. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], left: readonly number[] = [0]): string {
  const row = (cells: readonly string[]): string => `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  return [row(header), `|${header.map((_, i) => (left.includes(i) ? ':--' : '--:')).join('|')}|`, ...rows.map(row)].join('\n');
}

/** The machine as the bench and sim reports name it: CPU count × model, Node version. */
function machine(): string {
  const list = cpus();
  return `${list.length} x ${(list[0]?.model ?? 'unknown').replace(/\s+/g, ' ').trim()}, Node ${process.versions.node}`;
}

/** The text between the markers for `run`. */
function sectionText(run: MeasuredRun): string {
  return [
    `- **Measured**: ${run.started.toISOString().replace(/\.\d+Z$/, 'Z')}`,
    `- **Machine**: ${machine()}`,
    `- **Command**: \`${run.command}\` (exit ${run.exitCode})`,
    '',
    run.body,
  ].join('\n');
}

/**
 * `text` (a page) with what lies between the markers of `section.id` replaced by `body`, on lines of its
 * own; the markers and everything outside them unchanged. Pure.
 * @throws {MeasuredSectionError} when a marker is missing or appears twice, or END comes before BEGIN
 */
export function replaceMeasured(text: string, section: MeasuredSection, body: string): string {
  const begin = `<!-- BEGIN measured:${section.id} -->`;
  const end = `<!-- END measured:${section.id} -->`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  const problem =
    from < 0 || to < 0
      ? 'has no'
      : text.includes(begin, from + 1) || text.includes(end, to + 1)
        ? 'has more than one'
        : to < from
          ? 'has END before BEGIN in its'
          : undefined;
  if (problem) throw new MeasuredSectionError(`${section.page} ${problem} "${begin}" … "${end}" section: nothing written`);
  return `${text.slice(0, from + begin.length)}\n${body}\n${text.slice(to)}`;
}

/** The file of `page`: in the folder {@link DOCS_DIR_ENV} names when set, else in the repository's docs/benchmarks. */
function pageFile(page: string, env: CommandIo['env']): string {
  return join((env ?? process.env)[DOCS_DIR_ENV] || DOCS_DIR, page);
}

/** `file` as the user sees it: relative to the working directory when inside it. */
function shown(file: string): string {
  const path = relative(process.cwd(), file);
  return path.startsWith('..') || isAbsolute(path) ? file : path;
}

/** The text of `section`'s page. @throws {MeasuredSectionError} when the page does not exist */
function readPage(section: MeasuredSection, env: CommandIo['env']): string {
  const file = pageFile(section.page, env);
  if (!existsSync(file)) throw new MeasuredSectionError(`${shown(file)} does not exist: no measured:${section.id} section to write`);
  return readFileSync(file, 'utf8');
}

/**
 * Writes `run` between the markers of `section` (through a temporary file renamed over the page: the page is
 * the old one or the new one, never half written); returns the page's path as the user sees it.
 * @throws {MeasuredSectionError} when the page or its markers are missing
 */
function writeMeasuredSection(section: MeasuredSection, run: MeasuredRun, env: CommandIo['env']): string {
  const file = pageFile(section.page, env);
  const text = replaceMeasured(readPage(section, env), { ...section, page: shown(file) }, sectionText(run));
  const temp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, text);
    renameSync(temp, file);
  } finally {
    rmSync(temp, { force: true });
  }
  return shown(file);
}

/** A `--write-docs` run under way ({@link startMeasuredRun}). */
interface MeasuredRunRecorder {
  /** The `io` to run the command with: its stdout is also recorded. */
  io: CommandIo;
  /** Everything written to stdout so far. */
  printed(): string;
  /** Writes the section of the finished run (its exit code and output) and says so on stderr. @throws {MeasuredSectionError} */
  finish(exitCode: number, body: string): void;
}

/**
 * Starts a `--write-docs` run: checks now that the target's page holds its markers (so a long run does not
 * end in that error), notes the start and records stdout. Call `finish` only once the run has finished: a
 * run that threw or was stopped writes nothing.
 * @throws {MeasuredSectionError} when the page or its markers are missing
 */
export function startMeasuredRun(target: DocsTarget, io: CommandIo): MeasuredRunRecorder {
  const { section, command } = target;
  const file = shown(pageFile(section.page, io.env));
  replaceMeasured(readPage(section, io.env), { ...section, page: file }, '');
  const started = new Date();
  let printed = '';
  const stdout = {
    write: (chunk: string): unknown => {
      printed += chunk;
      return io.stdout.write(chunk);
    },
  };
  return {
    io: { ...io, stdout },
    printed: () => printed,
    finish(exitCode, body) {
      const path = writeMeasuredSection(section, { command, exitCode, started, body }, io.env);
      io.stderr.write(`measured:${section.id} written to ${path}\n`);
    },
  };
}

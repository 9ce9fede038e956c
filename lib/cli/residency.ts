/**
 * `ratelane residency`: where a lane's job data goes, drawn from what would be deployed.
 *
 * ```
 * ratelane residency [--lane eu] [--json] [--html FILE] [--cdk-out DIR] [-c key=value ...]
 * ```
 *
 * By default the lane stacks are synthesized in-process with the repository's app (aws-cdk-lib, an
 * optional peer dependency, must be installed), with the CDK context given by `-c key=value` /
 * `--context key=value` as `cdk synth -c` takes it; `--cdk-out DIR` reads an existing cloud assembly
 * instead. A lane the synth refuses is drawn from its config, with the refusal among its flags.
 * Exit codes: 0 every place inside its lane's geography; 1 something flagged (or a lane refused);
 * 2 bad usage, a wrong lane config, or no templates to read.
 */
import { writeFileSync } from 'node:fs';
import { configuredLanes } from '../config/file.js';
import type { LaneSet } from '../config/schema.js';
import { readCloudAssembly } from '../residency/cdk-out.js';
import { ResidencyInputError } from '../residency/errors.js';
import { formatResidency } from '../residency/format.js';
import { renderResidencyHtml } from '../residency/html.js';
import { type LaneSource, residencyMap } from '../residency/map.js';
import { laneSynthesizer } from '../residency/synth.js';
import { type Command, type CommandIo, UsageError } from './command.js';
import { type Flag, jsonFlag, parseFlags, repeatedFlag, stringFlag } from './flags.js';

/** Exit codes of `ratelane residency`. */
const RESIDENCY_EXIT = { ok: 0, flagged: 1, input: 2 } as const;

const RESIDENCY_USAGE = `Usage: ratelane residency [--lane <name>] [--json] [--html FILE] [--cdk-out DIR] [-c key=value ...]

Lists every place a lane's job data goes — the document bucket, the queues and DLQ, the DynamoDB tables
and their point-in-time backups, the log groups, the metrics (no text), the model endpoint and the
geography it processes in, the batch files, the review path — with region, encryption and retention as
the synthesized templates set them, and flags anything outside the lane's geography.

  --lane NAME          only this lane (default: every lane)
  --json               print { lanes: [{ lane, region, geography, places, flagged, ... }] } on stdout
  --html FILE          also write the map as a self-contained HTML page
  --cdk-out DIR        read an existing cloud assembly (cdk synth's cdk.out) instead of synthesizing
  -c, --context K=V    CDK context for the in-process synth, as cdk synth -c takes it
                       (config=<file>, usRegion=…, euProviderBaseUrl=…, alarmEmail=…); repeatable

The in-process synth needs aws-cdk-lib, constructs and cdk-nag; the functions are not bundled and,
unless the context names an alarm destination, alarmDestination=none is assumed (nothing is deployed).
The lane config file is -c config=<file>, else RATELANE_CONFIG, else ratelane.config.json, else the built-in lanes.
Exit codes: 0 everything inside its lane's geography; 1 something flagged or a lane refused by the synth;
2 bad usage, a wrong lane config, or no templates to read.
`;

/** The options of one `ratelane residency`. */
export interface ResidencyOptions {
  lane: string | undefined;
  json: boolean;
  html: string | undefined;
  cdkOut: string | undefined;
  /** The `-c key=value` pairs. */
  context: Record<string, string>;
}

/** `-c` / `--context`: repeatable `key=value`. */
const contextFlag: Flag<string[]> = { ...repeatedFlag(), short: 'c' };

const RESIDENCY_FLAGS = {
  lane: stringFlag(),
  json: jsonFlag(),
  html: stringFlag(),
  'cdk-out': stringFlag(),
  context: contextFlag,
};

/** Parses the flags of `ratelane residency` (pure). @throws {UsageError} */
function parseResidencyArgs(argv: readonly string[]): ResidencyOptions {
  const v = parseFlags(argv, RESIDENCY_FLAGS);
  const context: Record<string, string> = {};
  for (const pair of v.context) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`-c/--context takes key=value, got "${pair}"`);
    context[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (v['cdk-out'] !== undefined && Object.keys(context).length > 0) {
    throw new UsageError('-c/--context sets the in-process synth; with --cdk-out the templates are already synthesized (give the context to cdk synth)');
  }
  if (v.html === '') throw new UsageError('--html needs a file name');
  return { lane: v.lane, json: v.json, html: v.html, cdkOut: v['cdk-out'], context };
}

/** Refuses a `--lane` that is not among `known`. @throws {UsageError} */
function checkLane(lane: string | undefined, known: readonly string[]): void {
  if (lane !== undefined && !known.includes(lane)) throw new UsageError(`--lane ${lane}: no such lane (lanes: ${known.join(', ') || 'none'})`);
}

/** The lanes of the config file, or none when it cannot be read (with --cdk-out it only backs a template without a lane config). */
function configuredOrNone(io: CommandIo): LaneSet {
  try {
    return configuredLanes({ env: io.env ?? process.env }).lanes;
  } catch {
    return {};
  }
}

/** The lanes' templates from an existing cloud assembly. */
function sourcesFromCdkOut(dir: string, options: ResidencyOptions, io: CommandIo): LaneSource[] {
  const stacks = readCloudAssembly(dir).filter((s) => s.lane !== undefined);
  if (stacks.length === 0) throw new ResidencyInputError(`${dir} holds no lane stack (ratelane-<lane>)`);
  checkLane(
    options.lane,
    stacks.map((s) => s.lane as string),
  );
  const configured = configuredOrNone(io);
  return stacks
    .filter((s) => options.lane === undefined || s.lane === options.lane)
    .map((stack) => ({ name: stack.lane as string, configured: configured[stack.lane as string], stack, origin: 'cdk-out' as const }));
}

/** The lanes' templates from an in-process synth (a refused lane keeps its config and the refusal). */
async function sourcesFromSynth(options: ResidencyOptions, io: CommandIo): Promise<LaneSource[]> {
  const synth = await laneSynthesizer(options.context, { env: io.env ?? process.env });
  const lanes = synth.lanes();
  checkLane(options.lane, Object.keys(lanes));
  const sources: LaneSource[] = [];
  for (const lane of Object.values(lanes)) {
    if (options.lane !== undefined && lane.name !== options.lane) continue;
    io.stderr.write(`ratelane residency: synthesizing lane ${lane.name} (${lane.region}) in-process\n`);
    const result = synth.synthesize(lane);
    sources.push({ name: lane.name, configured: lane, stack: result.stack, origin: 'synth', synthRefusal: result.refusal });
  }
  return sources;
}

/** Draws the map, prints it, writes the page; resolves the exit code. */
async function runResidency(options: ResidencyOptions, io: CommandIo): Promise<number> {
  let sources: LaneSource[];
  try {
    sources = options.cdkOut !== undefined ? sourcesFromCdkOut(options.cdkOut, options, io) : await sourcesFromSynth(options, io);
  } catch (error) {
    if (!(error instanceof ResidencyInputError)) throw error;
    if (options.json) io.stdout.write(`${JSON.stringify({ ok: false, error: { kind: 'input', message: error.message } })}\n`);
    else io.stderr.write(`ratelane residency: ${error.message}\n`);
    return RESIDENCY_EXIT.input;
  }
  const map = residencyMap(sources);
  if (options.html !== undefined) {
    writeFileSync(options.html, renderResidencyHtml(map));
    io.stderr.write(`ratelane residency: wrote ${options.html}\n`);
  }
  io.stdout.write(options.json ? `${JSON.stringify(map)}\n` : formatResidency(map));
  return map.lanes.some((lane) => lane.flagged.length > 0) ? RESIDENCY_EXIT.flagged : RESIDENCY_EXIT.ok;
}

/** `ratelane residency`. */
export const residencyCommand: Command<ResidencyOptions> = {
  name: 'residency',
  usage: RESIDENCY_USAGE,
  helpTo: 'stdout',
  jsonUsageErrors: true,
  parse: parseResidencyArgs,
  run: runResidency,
};

/**
 * The lane stacks as the repository's CDK app would deploy them, synthesized in-process: the lanes of
 * the config file with the CDK context's overrides (`lanesFromContext`, as `bin/app.ts` reads them), each
 * lane in an app of its own (`buildLaneApp`, cdk-nag included) written to a temporary cloud assembly
 * and read back, so a lane the synth refuses leaves the others' templates intact. As `.ci/synth` does
 * offline, the functions are not bundled (the templates are the same but for asset hashes) and, unless
 * the context names an alarm destination, `alarmDestination=none` is given (nothing is deployed).
 *
 * aws-cdk-lib (an optional peer dependency) and cdk-nag are imported only here, when it runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configuredLanes } from '../config/file.js';
import type { LaneConfig, LaneSet } from '../config/schema.js';
import { readCloudAssembly } from './cdk-out.js';
import { ResidencyInputError } from './errors.js';
import type { StackTemplate } from './template.js';

/** Context keys that name an alarm destination (then `alarmDestination=none` is not added). */
const ALARM_CONTEXT = /^(alarmEmail|alarmDestination|\w+AlarmTopicArn)$/;

/** The context of the residency synth: the given pairs, bundling skipped, and `alarmDestination=none` unless one is named. */
function synthContext(given: Readonly<Record<string, string>>): Record<string, unknown> {
  const namesDestination = Object.keys(given).some((key) => ALARM_CONTEXT.test(key));
  return { ...(namesDestination ? {} : { alarmDestination: 'none' }), ...given, 'aws:cdk:bundling-stacks': [] };
}

/** One lane synthesized: its stack's template, or why the synth refused it. */
type LaneSynthesis = { stack: StackTemplate; refusal?: undefined } | { stack?: undefined; refusal: string };

/** The in-process synthesizer of the lane stacks. */
export interface LaneSynthesizer {
  /** The lanes the app would deploy: the config file's (`-c config=`, `RATELANE_CONFIG`, `ratelane.config.json`), with the context's overrides. */
  lanes(): LaneSet;
  /** Synthesizes one lane's stack. Never throws for a refusal: it is returned. */
  synthesize(lane: LaneConfig): LaneSynthesis;
}

/** Where the lane config file is looked for. */
interface SynthEnvironment {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Loads aws-cdk-lib, cdk-nag and the repository's app. @throws {ResidencyInputError} when one is not installed */
async function loadCdk(): Promise<{ App: typeof import('aws-cdk-lib').App; app: typeof import('../infra/app.js') }> {
  try {
    const [{ App }, app] = await Promise.all([import('aws-cdk-lib'), import('../infra/app.js')]);
    return { App, app };
  } catch (error) {
    const missing = /Cannot find (?:package|module) '([^']+)'/.exec(error instanceof Error ? error.message : '')?.[1];
    if (missing === undefined) throw error;
    throw new ResidencyInputError(
      `drawing the map from a synth needs aws-cdk-lib, constructs and cdk-nag, and ${missing} is not installed: ` +
        '`npm install --save-dev aws-cdk-lib constructs cdk-nag`, or synthesize elsewhere and give --cdk-out <dir>',
      { cause: error },
    );
  }
}

/**
 * The synthesizer for `context` (the `-c key=value` pairs).
 * @throws {ResidencyInputError} when aws-cdk-lib or cdk-nag is not installed
 */
export async function laneSynthesizer(context: Readonly<Record<string, string>>, where: SynthEnvironment = {}): Promise<LaneSynthesizer> {
  const { App, app } = await loadCdk();
  const full = synthContext(context);
  return {
    lanes() {
      const base = configuredLanes({ path: context.config, ...(where.cwd ? { cwd: where.cwd } : {}), ...(where.env ? { env: where.env } : {}) }).lanes;
      try {
        return app.lanesFromContext(new App({ context: full }), base);
      } catch (error) {
        if (error instanceof app.AppContextError) throw new ResidencyInputError(error.message, { cause: error });
        throw error;
      }
    },
    synthesize(lane) {
      const outdir = mkdtempSync(join(tmpdir(), 'ratelane-residency-'));
      try {
        const lanes: LaneSet = { [lane.name]: lane };
        const cdkApp = new App({ outdir, context: full });
        app.buildLaneApp(cdkApp, lanes);
        cdkApp.synth();
        return readLane(outdir, lane);
      } catch (error) {
        return { refusal: error instanceof Error ? error.message : String(error) };
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    },
  };
}

/** Reads one lane's stack from a synthesized assembly. */
function readLane(outdir: string, lane: LaneConfig): LaneSynthesis {
  const stack = readCloudAssembly(outdir).find((s) => s.lane === lane.name);
  return stack ? { stack } : { refusal: `the synth wrote no stack for lane ${lane.name}` };
}

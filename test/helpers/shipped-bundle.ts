/**
 * The shipped artifact of a lane stack: a real, offline `cdk synth` of one stack (its functions bundled
 * by esbuild, as `.ci/synth` does it), its template, and one function's asset folder (`index.mjs`):
 * the consumer ({@link shippedConsumer}) or the live function ({@link shippedLive}), both read from the
 * same synth output. The synth output is kept under `.cache/shipped-consumer/`, keyed by a hash of every
 * file the synth reads (bin, lib, lambdas, corpus, package and lock files, cdk.json): a changed
 * source synthesizes again, an unchanged tree reuses it. It never reads `.cache/cdk.out` (which
 * `.ci/synth` deletes and rewrites).
 *
 * Also: turning the function's `Environment.Variables` into plain strings as CloudFormation would
 * (pseudo parameters, `Fn::Join`), with resource tokens (`Ref`, `Fn::GetAtt`) replaced through a
 * resolver the caller gives.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { consumerFunctionName, liveFunctionName } from '../../lib/platform/resources.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CACHE = join(ROOT, '.cache', 'shipped-consumer');
/** What the synth reads: sources, the CDK app, the corpus, and what decides node_modules. */
const INPUT_DIRS = ['bin', 'lib', 'lambdas', 'workbench'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'cdk.json', 'tsconfig.json'];
/** The synth's context: an alarm destination (`none`: nothing is deployed; a lane stack refuses to synthesize without one). */
const SYNTH_CONTEXT = ['-c', 'alarmDestination=none'];

/** One resource of a synthesized template. */
interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** A synthesized CloudFormation template (the parts the tests read). */
export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
}

/** A bundled function's properties as synthesized. */
interface ShippedFunction {
  logicalId: string;
  functionName: string;
  handler: string;
  runtime: string;
  timeoutSeconds: number;
  memoryMb: number;
  /** `Environment.Variables`, tokens unresolved. */
  environment: Record<string, unknown>;
}

/** A synthesized lane stack and one of its bundled functions (the consumer; {@link ShippedLive}: the live function). */
export interface ShippedConsumer {
  stack: string;
  /** The synth output folder (a `cdk.out`). */
  outDir: string;
  template: CfnTemplate;
  function: ShippedFunction;
  /** The function's asset folder (holds `index.mjs`). */
  bundleDir: string;
  /** The region the stack deploys to (its asset destination's). */
  region: string;
  /** Whether this run synthesized (false: an output of the same inputs was reused). */
  synthesized: boolean;
  /** Time spent synthesizing (0 when reused). */
  synthMs: number;
}

/** A synthesized lane stack and its bundled live function (`ratelane-<lane>-live`). */
export type ShippedLive = ShippedConsumer;

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
}

/** A hash of every file the synth reads (names and contents) and of its context. */
function synthInputsFingerprint(): string {
  const files: string[] = [];
  for (const dir of INPUT_DIRS) if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir), files);
  for (const file of INPUT_FILES) if (existsSync(join(ROOT, file))) files.push(join(ROOT, file));
  const hash = createHash('sha256');
  hash.update(SYNTH_CONTEXT.join(' '));
  hash.update('\0');
  for (const file of files) {
    hash.update(relative(ROOT, file));
    hash.update('\0');
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Runs `cdk synth <stack>` offline into `outDir` (the flags, environment and alarm destination of `.ci/synth`). */
async function cdkSynth(stack: string, outDir: string): Promise<void> {
  const home = join(CACHE, 'synth-home');
  const cdkHome = join(CACHE, 'cdk-home');
  mkdirSync(home, { recursive: true });
  mkdirSync(cdkHome, { recursive: true });
  const child = spawn(join(ROOT, 'node_modules', '.bin', 'cdk'), ['synth', stack, '--no-notices', '--quiet', '--output', outDir, ...SYNTH_CONTEXT], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      CDK_DISABLE_CLI_TELEMETRY: 'true',
      CDK_DISABLE_VERSION_CHECK: '1',
      npm_config_update_notifier: 'false',
      CDK_HOME: cdkHome,
      // aws-cdk-lib keeps an asset cache under $HOME/.cdk whatever CDK_HOME says.
      HOME: home,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_EC2_METADATA_DISABLED: 'true',
    },
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code: number | null = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c) => resolve(c));
  });
  if (code !== 0) throw new Error(`cdk synth ${stack} exited with ${code}:\n${output.slice(-4000)}`);
}

function hasOutput(outDir: string, stack: string): boolean {
  return existsSync(join(outDir, `${stack}.template.json`)) && existsSync(join(outDir, `${stack}.assets.json`));
}

/** Removes outputs of other inputs of the same stack (and abandoned temporary folders) that nobody used for 10 minutes. */
function pruneOld(stack: string, keep: string): void {
  for (const name of readdirSync(CACHE)) {
    const path = join(CACHE, name);
    if (path === keep || !(name.startsWith(`${stack}-`) || name.startsWith('tmp-'))) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > 10 * 60_000) rmSync(path, { recursive: true, force: true });
    } catch {
      // another run may be removing it too
    }
  }
}

/** Reads the synthesized stack: the template, the function named `functionName` and its asset folder. */
export function readShippedFunction(stack: string, outDir: string, functionName: string): Omit<ShippedConsumer, 'synthesized' | 'synthMs'> {
  const template = JSON.parse(readFileSync(join(outDir, `${stack}.template.json`), 'utf8')) as CfnTemplate;
  const assets = JSON.parse(readFileSync(join(outDir, `${stack}.assets.json`), 'utf8')) as {
    files?: Record<string, { source: { path: string; packaging?: string }; destinations?: Record<string, { region?: string }> }>;
  };
  const functions = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties?.FunctionName === functionName);
  if (functions.length !== 1) throw new Error(`${stack}: expected one function ${functionName}, found ${functions.length}`);
  const [logicalId, resource] = functions[0]!;
  const p = resource.Properties ?? {};
  const code = p.Code as { S3Key?: unknown } | undefined;
  const assetId = typeof code?.S3Key === 'string' ? code.S3Key.replace(/\.zip$/, '') : undefined;
  const asset = assetId ? assets.files?.[assetId] : undefined;
  if (asset?.source.packaging !== 'zip') throw new Error(`${stack}: the function's code (${String(code?.S3Key)}) is not a zip asset of the stack`);
  const bundleDir = join(outDir, asset.source.path);
  if (!existsSync(join(bundleDir, 'index.mjs'))) throw new Error(`${stack}: no index.mjs in ${bundleDir}`);
  const region = Object.values(asset.destinations ?? {})[0]?.region;
  if (!region) throw new Error(`${stack}: the asset of ${functionName} names no destination region`);
  const environment = ((p.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;
  return {
    stack,
    outDir,
    template,
    bundleDir,
    region,
    function: {
      logicalId,
      functionName: String(p.FunctionName),
      handler: String(p.Handler),
      runtime: String(p.Runtime),
      timeoutSeconds: Number(p.Timeout ?? 3),
      memoryMb: Number(p.MemorySize ?? 128),
      environment,
    },
  };
}

/** The lane of a stack (`ratelane-us` → `us`). */
const laneOf = (stack: string): string => stack.replace(/^ratelane-/, '');

/** Reads the synthesized stack's consumer function (`ratelane-<lane>-consumer`) and its asset folder. */
function readShippedConsumer(stack: string, outDir: string): Omit<ShippedConsumer, 'synthesized' | 'synthMs'> {
  return readShippedFunction(stack, outDir, consumerFunctionName(laneOf(stack)));
}

/** Reads the synthesized stack's live function (`ratelane-<lane>-live`) and its asset folder. */
function readShippedLive(stack: string, outDir: string): Omit<ShippedLive, 'synthesized' | 'synthMs'> {
  return readShippedFunction(stack, outDir, liveFunctionName(laneOf(stack)));
}

/**
 * The synthesized `stack` (default `ratelane-us`) and its bundled consumer: synthesizes it unless an
 * output of the same inputs is in the cache.
 */
export async function shippedConsumer(stack = 'ratelane-us'): Promise<ShippedConsumer> {
  const { outDir, synthesized, synthMs } = await synthesizedStack(stack);
  return { ...readShippedConsumer(stack, outDir), synthesized, synthMs };
}

/**
 * The synthesized `stack` (default `ratelane-us`) and its bundled live function, from the same synth
 * output as {@link shippedConsumer}: synthesizes it unless an output of the same inputs is in the cache.
 */
export async function shippedLive(stack = 'ratelane-us'): Promise<ShippedLive> {
  const { outDir, synthesized, synthMs } = await synthesizedStack(stack);
  return { ...readShippedLive(stack, outDir), synthesized, synthMs };
}

/** The synth output folder of `stack` for the current sources: the cached one, or a new synth. */
async function synthesizedStack(stack: string): Promise<{ outDir: string; synthesized: boolean; synthMs: number }> {
  mkdirSync(CACHE, { recursive: true });
  const finalDir = join(CACHE, `${stack}-${synthInputsFingerprint()}`);
  if (hasOutput(finalDir, stack)) {
    // Marks it in use, so a run of other sources does not prune it meanwhile.
    const now = new Date();
    utimesSync(finalDir, now, now);
    return { outDir: finalDir, synthesized: false, synthMs: 0 };
  }
  const tmp = join(CACHE, `tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const started = Date.now();
  try {
    await cdkSynth(stack, tmp);
    if (!hasOutput(tmp, stack)) throw new Error(`cdk synth ${stack} wrote no template or assets manifest to ${tmp}`);
    try {
      renameSync(tmp, finalDir);
    } catch (error) {
      // A concurrent run finished the same inputs first: use its output.
      if (!hasOutput(finalDir, stack)) throw error;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const synthMs = Date.now() - started;
  pruneOld(stack, finalDir);
  return { outDir: finalDir, synthesized: true, synthMs };
}

/** Replaces one resource token (`{ Ref }`, `{ 'Fn::GetAtt': [id, attr] }`) of the template; `undefined`: unknown. */
export type TokenResolver = (token: { logicalId: string; attribute: string | undefined; resource: CfnResource }) => string | undefined;

/** The values of CloudFormation's pseudo parameters where the stack is "deployed". */
export interface PseudoParameters {
  accountId: string;
  region: string;
  partition?: string;
}

/**
 * One template value as CloudFormation would resolve it: strings as they are; `Ref` to a pseudo
 * parameter; `Ref` and `Fn::GetAtt` to a resource through `resolve`; `Fn::Join` of any of these.
 * Anything else throws: a new kind of value in the template must be taught here, not silently dropped.
 */
export function resolveValue(value: unknown, template: CfnTemplate, pseudo: PseudoParameters, resolve: TokenResolver, where = 'value'): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const token = (value ?? {}) as Record<string, unknown>;
  const keys = Object.keys(token);
  const fail = (): never => {
    throw new Error(`${where}: no local value for ${JSON.stringify(value)}`);
  };
  if (keys.length !== 1) return fail();
  if (typeof token.Ref === 'string' && token.Ref.startsWith('AWS::')) {
    const pseudoValue = {
      'AWS::AccountId': pseudo.accountId,
      'AWS::Region': pseudo.region,
      'AWS::Partition': pseudo.partition ?? 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
    }[token.Ref];
    return pseudoValue ?? fail();
  }
  const join = token['Fn::Join'];
  if (Array.isArray(join) && join.length === 2 && typeof join[0] === 'string' && Array.isArray(join[1])) {
    return (join[1] as unknown[]).map((part) => resolveValue(part, template, pseudo, resolve, where)).join(join[0]);
  }
  const getAtt = Array.isArray(token['Fn::GetAtt']) ? (token['Fn::GetAtt'] as unknown[]) : undefined;
  const logicalId = typeof token.Ref === 'string' ? token.Ref : typeof getAtt?.[0] === 'string' ? getAtt[0] : undefined;
  const resource = logicalId ? template.Resources[logicalId] : undefined;
  if (!logicalId || !resource) return fail();
  return resolve({ logicalId, attribute: typeof getAtt?.[1] === 'string' ? getAtt[1] : undefined, resource }) ?? fail();
}

/** The function's environment as the Lambda service would set it, every value resolved by {@link resolveValue}. */
export function resolveEnvironment(
  consumer: Pick<ShippedConsumer, 'template' | 'function'>,
  pseudo: PseudoParameters,
  resolve: TokenResolver,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(consumer.function.environment)) {
    env[name] = resolveValue(value, consumer.template, pseudo, resolve, `environment variable ${name}`);
  }
  return env;
}

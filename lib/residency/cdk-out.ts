/**
 * Reads a cloud assembly (a `cdk.out` folder, or the one an in-process synth wrote): its `manifest.json`
 * names each CloudFormation stack with its template file and environment (`aws://<account>/<region>`);
 * nested assemblies (stages) are followed. Plain files: no aws-cdk-lib needed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResidencyInputError } from './errors.js';
import { type CfnTemplate, isRecord, type StackTemplate } from './template.js';

/** The tag every lane stack carries with its lane's name (`lib/infra/lane-stack.ts`). */
const LANE_TAG = 'ratelane:lane';

/** Reads and parses a JSON file. @throws {ResidencyInputError} naming the file */
function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = code === 'ENOENT' ? 'no such file' : error instanceof SyntaxError ? `not JSON (${error.message})` : String(code ?? error);
    throw new ResidencyInputError(`${path}: ${why}`, { cause: error });
  }
}

/** The region of an artifact environment `aws://<account>/<region>`; undefined when agnostic (`unknown-region`). */
function regionOfEnvironment(environment: unknown): string | undefined {
  if (typeof environment !== 'string') return undefined;
  const region = /^aws:\/\/[^/]*\/(.+)$/.exec(environment)?.[1];
  return region === undefined || region === 'unknown-region' ? undefined : region;
}

/** The lane a stack deploys: its `ratelane:lane` tag, else the name after `ratelane-`. */
function laneOfStack(stackName: string, tags: unknown): string | undefined {
  const tag = isRecord(tags) ? tags[LANE_TAG] : undefined;
  if (typeof tag === 'string') return tag;
  return stackName.startsWith('ratelane-') ? stackName.slice('ratelane-'.length) : undefined;
}

/**
 * Every CloudFormation stack of the cloud assembly in `dir`, with its template.
 * @throws {ResidencyInputError} when the folder has no readable manifest or a stack's template is missing
 */
export function readCloudAssembly(dir: string): StackTemplate[] {
  const manifest = readJson(join(dir, 'manifest.json'));
  const artifacts = isRecord(manifest) && isRecord(manifest.artifacts) ? manifest.artifacts : undefined;
  if (!artifacts) throw new ResidencyInputError(`${join(dir, 'manifest.json')}: not a cloud assembly manifest (no artifacts)`);
  const stacks: StackTemplate[] = [];
  for (const [id, artifact] of Object.entries(artifacts)) {
    if (!isRecord(artifact)) continue;
    const properties = isRecord(artifact.properties) ? artifact.properties : {};
    if (artifact.type === 'cdk:cloud-assembly' && typeof properties.directoryName === 'string') {
      stacks.push(...readCloudAssembly(join(dir, properties.directoryName)));
      continue;
    }
    if (artifact.type !== 'aws:cloudformation:stack' || typeof properties.templateFile !== 'string') continue;
    const stackName = typeof properties.stackName === 'string' ? properties.stackName : id;
    const template = readJson(join(dir, properties.templateFile));
    if (!isRecord(template)) throw new ResidencyInputError(`${join(dir, properties.templateFile)}: not a CloudFormation template`);
    stacks.push({
      stackName,
      lane: laneOfStack(stackName, properties.tags),
      region: regionOfEnvironment(artifact.environment),
      template: template as CfnTemplate,
    });
  }
  return stacks;
}

/**
 * `npm run build` (and `npm pack`, through `prepack`): what the installed package runs, with no
 * TypeScript or tsx at run time —
 * - `dist/lib`: lib/ compiled by tsc (`tsconfig.build.json`), with declarations;
 * - `dist/assets/<function>/index.mjs`: each lane function bundled by esbuild with the options the CDK
 *   app bundles it with from source (`laneFunctionBundling`), which `ExtractionLane` deploys as they are.
 * Prints what it made and how large; exits 1 when a step fails. A build whose inputs (lib/, lambdas/, the
 * package and lock files, the tsconfigs, this file) hash as those of the build in dist/ is skipped
 * (CI's API check builds, then the package test packs); `--force` builds anyway.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import { type LaneFunctionName, laneFunctionBundling, laneFunctionEntry, PROJECT_ROOT } from '../../lib/infra/lane-function.js';

const DIST = join(PROJECT_ROOT, 'dist');
const FUNCTIONS: readonly LaneFunctionName[] = ['consumer', 'live', 'batch-reconciler'];
/** The hash of the inputs dist/ was built from. */
const STAMP = join(DIST, '.inputs-sha256');
const INPUT_DIRS = ['lib', 'lambdas'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'workbench/build/package.ts'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

/** One hash of every input's path and content. */
function inputsHash(): string {
  const hash = createHash('sha256');
  const files = [...INPUT_DIRS.flatMap((dir) => filesUnder(join(PROJECT_ROOT, dir))), ...INPUT_FILES.map((f) => join(PROJECT_ROOT, f))];
  for (const file of files)
    hash
      .update(`${relative(PROJECT_ROOT, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex');
}

/** Whether dist/ holds a build of exactly these inputs (its stamp and every bundle are there). */
function upToDate(hash: string): boolean {
  if (!existsSync(STAMP) || readFileSync(STAMP, 'utf8').trim() !== hash) return false;
  return existsSync(join(DIST, 'lib', 'index.js')) && FUNCTIONS.every((name) => existsSync(join(DIST, 'assets', name, 'index.mjs')));
}

/** Bundles one lane function into dist/assets/<name>/index.mjs, as NodejsFunction would at synth. */
async function bundle(name: LaneFunctionName): Promise<string> {
  const options = laneFunctionBundling();
  const outfile = join(DIST, 'assets', name, 'index.mjs');
  await build({
    entryPoints: [laneFunctionEntry(name)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: options.target ?? 'node24',
    mainFields: options.mainFields ?? ['module', 'main'],
    ...(options.banner !== undefined ? { banner: { js: options.banner } } : {}),
    external: options.externalModules ?? [],
    minify: options.minify ?? false,
    sourcemap: options.sourceMap ?? false,
    sourcesContent: options.sourcesContent ?? true,
    logLevel: 'warning',
  });
  return outfile;
}

function kib(path: string): string {
  return `${(statSync(path).size / 1024).toFixed(0)} KiB`;
}

async function main(): Promise<void> {
  const started = Date.now();
  const hash = inputsHash();
  if (!process.argv.includes('--force') && upToDate(hash)) {
    process.stderr.write(`build: dist/ is up to date (its inputs are unchanged: ${hash.slice(0, 12)}); --force builds anyway\n`);
    return;
  }
  rmSync(DIST, { recursive: true, force: true });
  process.stderr.write('build: tsc -p tsconfig.build.json → dist/lib\n');
  execFileSync(join(PROJECT_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(PROJECT_ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  for (const name of FUNCTIONS) {
    const out = await bundle(name);
    process.stderr.write(`build: ${name} → ${out.slice(PROJECT_ROOT.length + 1)} (${kib(out)})\n`);
  }
  writeFileSync(STAMP, `${hash}\n`);
  process.stderr.write(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`build failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

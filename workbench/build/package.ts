/**
 * `npm run build` (and `npm pack`, through `prepack`): what the installed package runs, with no
 * TypeScript or tsx at run time —
 * - `dist/lib`: lib/ compiled by tsc (`tsconfig.build.json`), with declarations;
 * - `dist/assets/<function>/index.mjs`: each lane function bundled by esbuild with the options the CDK
 *   app bundles it with from source (`laneFunctionBundling`), which `ExtractionLane` deploys as they are.
 * Prints what it made and how large; exits 1 when a step fails.
 */
import { execFileSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type LaneFunctionName, laneFunctionBundling, laneFunctionEntry, PROJECT_ROOT } from '../../lib/infra/lane-function.js';

const DIST = join(PROJECT_ROOT, 'dist');
const FUNCTIONS: readonly LaneFunctionName[] = ['consumer', 'live', 'batch-reconciler'];

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
  rmSync(DIST, { recursive: true, force: true });
  process.stderr.write('build: tsc -p tsconfig.build.json → dist/lib\n');
  execFileSync(join(PROJECT_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(PROJECT_ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  for (const name of FUNCTIONS) {
    const out = await bundle(name);
    process.stderr.write(`build: ${name} → ${out.slice(PROJECT_ROOT.length + 1)} (${kib(out)})\n`);
  }
  process.stderr.write(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`build failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

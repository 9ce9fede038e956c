/**
 * `npm run api:check` (CI) and `npm run api:report`: the package's public surface, one API Extractor report
 * per entry (`ratelane`, `ratelane/cdk`, `ratelane/client`, `ratelane/lambda`) in `docs/api/`, made from the
 * declarations `npm run build` wrote to dist/lib. The check fails when the surface differs from the reports
 * checked in, and says which; `api:report` writes the new reports, to be reviewed and committed with the
 * change that made them.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';
import { PROJECT_ROOT } from '../../lib/infra/lane-function.js';

const ENTRIES = ['index', 'cdk', 'client', 'lambda'] as const;
const REPORTS = join(PROJECT_ROOT, 'docs', 'api');
const TEMP = join(PROJECT_ROOT, '.cache', 'api');

function configOf(entry: (typeof ENTRIES)[number]): ExtractorConfig {
  return ExtractorConfig.prepare({
    configObjectFullPath: join(PROJECT_ROOT, 'api-extractor.json'),
    packageJsonFullPath: join(PROJECT_ROOT, 'package.json'),
    configObject: {
      projectFolder: PROJECT_ROOT,
      mainEntryPointFilePath: join(PROJECT_ROOT, 'dist', 'lib', `${entry}.d.ts`),
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            module: 'ESNext',
            moduleResolution: 'Bundler',
            lib: ['ES2022'],
            types: ['node'],
            strict: true,
            skipLibCheck: true,
          },
          include: ['dist/lib/**/*.d.ts'],
        },
      },
      apiReport: { enabled: true, reportFolder: REPORTS, reportTempFolder: TEMP, reportFileName: entry === 'index' ? 'ratelane' : `ratelane-${entry}` },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // The package has no release tags (@public/@beta): every export is public.
        extractorMessageReporting: { 'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None } },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      },
    },
  });
}

function main(): number {
  const update = process.argv.includes('--update');
  mkdirSync(REPORTS, { recursive: true });
  mkdirSync(TEMP, { recursive: true });
  const changed: string[] = [];
  const configs = ENTRIES.map((entry) => ({ entry, config: configOf(entry) }));
  // One TypeScript program of every entry's declarations, shared by the four reports (each would build its own).
  const compilerState = CompilerState.create(configs[0]!.config, { additionalEntryPoints: configs.map((c) => c.config.mainEntryPointFilePath) });
  for (const { entry, config } of configs) {
    const result = Extractor.invoke(config, {
      compilerState,
      localBuild: update,
      showVerboseMessages: false,
      messageCallback: (m) => {
        if (m.logLevel === ExtractorLogLevel.Warning && m.messageId === 'console-api-report-changed') m.handled = true;
      },
    });
    const name = entry === 'index' ? 'ratelane' : `ratelane/${entry}`;
    if (result.apiReportChanged) changed.push(name);
    process.stderr.write(
      `api: ${name}: ${result.apiReportChanged ? (update ? 'report updated' : 'CHANGED') : 'unchanged'}${result.errorCount ? `, ${result.errorCount} error(s)` : ''}\n`,
    );
    if (!result.succeeded && !(result.apiReportChanged && result.errorCount === 0)) return 1;
  }
  if (changed.length > 0 && !update) {
    process.stderr.write(
      `api: the public surface of ${changed.join(', ')} changed; run \`npm run api:report\`, review docs/api/ and commit it with the change\n`,
    );
    return 1;
  }
  return 0;
}

process.exit(main());

/**
 * `--write-docs` on each measuring command: which page and section it writes, the command line it
 * records, a one-scenario bench run refused, and the real pages holding every section a command writes
 * (read only: no test writes docs/).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { UsageError } from '../../../lib/cli/command.js';
import { benchCommand } from '../../../workbench/drivers/bench/command.js';
import { replaceMeasured, type DocsTarget } from '../../../workbench/drivers/docs-page.js';
import { evalCommand } from '../../../workbench/drivers/eval/command.js';
import { localCommand } from '../../../workbench/drivers/run/command.js';
import { simCommand } from '../../../workbench/sim/command.js';

describe('--write-docs', () => {
  it('names the page and section of each command, with the command line that ran', () => {
    // Act
    const targets: [DocsTarget | undefined, string, string, string][] = [
      [simCommand.parse(['--write-docs']).writeDocs, 'simulator.md', 'sim', 'npm run sim -- --write-docs'],
      [simCommand.parse(['--scenario', 'all', '--write-docs']).writeDocs, 'simulator.md', 'sim', 'npm run sim -- --scenario all --write-docs'],
      [simCommand.parse(['--scenario', 'tokens', '--write-docs']).writeDocs, 'simulator.md', 'sim-tokens', 'npm run sim -- --scenario tokens --write-docs'],
      [benchCommand.parse(['--write-docs']).writeDocs, 'bench.md', 'bench-baseline', 'npm run bench -- --write-docs'],
      [
        benchCommand.parse(['--scenario', 'baseline', '--write-docs']).writeDocs,
        'bench.md',
        'bench-baseline',
        'npm run bench -- --scenario baseline --write-docs',
      ],
      [
        benchCommand.parse(['--scenario', 'all', '--strategies', 'c', '--write-docs']).writeDocs,
        'scenarios.md',
        'scenarios',
        'npm run bench -- --scenario all --strategies c --write-docs',
      ],
      [localCommand.parse(['--write-docs', '--jobs', '150']).writeDocs, 'local-run.md', 'local-run', 'npm run local -- --write-docs --jobs 150'],
      [
        localCommand.parse(['--no-admission', '--write-docs']).writeDocs,
        'local-run.md',
        'local-run-no-admission',
        'npm run local -- --no-admission --write-docs',
      ],
      [
        evalCommand.parse(['--release', '2026.12-rc1', '--baseline', '2026.11', '--write-docs']).writeDocs,
        'eval.md',
        'eval-2026.12-rc1',
        'npm run eval -- --release 2026.12-rc1 --baseline 2026.11 --write-docs',
      ],
      [evalCommand.parse(['--write-docs']).writeDocs, 'eval.md', 'eval-2026.11', 'npm run eval -- --write-docs'],
    ];
    // Assess
    for (const [target, page, id, command] of targets) assert.deepEqual(target, { section: { page, id }, command });
  });

  it('is off without the flag', () => {
    // Act + Assess
    for (const command of [simCommand, benchCommand, localCommand, evalCommand]) assert.equal('writeDocs' in command.parse([]), false, command.name);
  });

  it('refuses a bench run of one scenario: it would replace the table of every scenario', () => {
    // Act + Assess
    assert.throws(
      () => benchCommand.parse(['--scenario', 'daily-reset', '--write-docs']),
      (error: unknown) => error instanceof UsageError && /a run of daily-reset alone would replace the table of all: nothing is written/.test(error.message),
    );
  });

  it('finds in docs/benchmarks every section the commands write (the eval releases measured there)', () => {
    // Prepare
    const sections: [string, string][] = [
      ['simulator.md', 'sim'],
      ['simulator.md', 'sim-tokens'],
      ['bench.md', 'bench-baseline'],
      ['scenarios.md', 'scenarios'],
      ['local-run.md', 'local-run'],
      ['local-run.md', 'local-run-no-admission'],
      ['eval.md', 'eval-2026.12-rc1'],
      ['eval.md', 'eval-2026.12-rc2'],
    ];
    for (const [page, id] of sections) {
      const text = readFileSync(new URL(`../../../docs/benchmarks/${page}`, import.meta.url), 'utf8');
      // Act + Assess
      assert.doesNotThrow(() => replaceMeasured(text, { page, id }, ''), `${page} measured:${id}`);
    }
  });
});

/**
 * `npm run sim -- --write-docs` writes its report into its section of a copy of docs/benchmarks/simulator.md
 * (RATELANE_BENCHMARK_DOCS points the command at the copy), the rest of the page unchanged; without the
 * markers it refuses before simulating.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCommand } from '../../../lib/cli/command.js';
import { simCommand } from '../../../workbench/sim/command.js';

const BEGIN = '<!-- BEGIN measured:sim -->';
const END = '<!-- END measured:sim -->';

/** A copy of the simulator page in a folder of its own, and an io that points the command at it. */
function pageCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'ratelane-sim-docs-'));
  const file = join(dir, 'simulator.md');
  copyFileSync(new URL('../../../docs/benchmarks/simulator.md', import.meta.url), file);
  const out: string[] = [];
  const err: string[] = [];
  const io = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, env: { RATELANE_BENCHMARK_DOCS: dir } };
  return { file, io, out, err };
}

describe('npm run sim -- --write-docs', () => {
  it('writes the report it printed into measured:sim, with the date, the machine and its command line', async () => {
    // Prepare
    const t = pageCopy();
    const before = readFileSync(t.file, 'utf8');
    const argv = ['--jobs', '300', '--consumers', '20', '--scenario', 'minute', '--parallel', '1', '--quiet', '--json', '--write-docs'];
    // Act
    const code = await runCommand(simCommand, argv, t.io);
    // Assess
    assert.equal(code, 0);
    const page = readFileSync(t.file, 'utf8');
    const section = page.slice(page.indexOf(BEGIN) + BEGIN.length, page.indexOf(END));
    assert.equal(page.slice(0, page.indexOf(BEGIN)), before.slice(0, before.indexOf(BEGIN)), 'the page before the section unchanged');
    assert.equal(page.slice(page.indexOf(END)), before.slice(before.indexOf(END)), 'the page after the section unchanged');
    assert.match(section, /^\n- \*\*Measured\*\*: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n- \*\*Machine\*\*: \d+ x .+, Node \d+\.\d+\.\d+\n/);
    assert.ok(
      section.includes(
        '- **Command**: `npm run sim -- --jobs 300 --consumers 20 --scenario minute --parallel 1 --quiet --json --write-docs` (exit 0)\n\n```\nratelane sim: 300 jobs',
      ),
    );
    const printed = t.out.join('').split('\n').slice(0, -2).join('\n');
    assert.ok(section.endsWith(`\n\`\`\`\n${printed}\n\`\`\`\n`), 'the report as printed, without its JSON line');
    assert.match(t.err.join(''), /measured:sim written to .*simulator\.md/);
  });

  it('refuses before simulating when the page has no measured:sim section, and writes nothing', async () => {
    // Prepare
    const t = pageCopy();
    const without = readFileSync(t.file, 'utf8').replace(BEGIN, '').replace(END, '');
    writeFileSync(t.file, without);
    // Act + Assess
    await assert.rejects(runCommand(simCommand, ['--jobs', '300', '--consumers', '20', '--parallel', '1', '--write-docs'], t.io), {
      name: 'MeasuredSectionError',
      message: /simulator\.md has no "<!-- BEGIN measured:sim -->" … "<!-- END measured:sim -->" section: nothing written/,
    });
    assert.deepEqual(t.out, [], 'nothing simulated');
    assert.equal(readFileSync(t.file, 'utf8'), without);
  });
});

/**
 * The measured sections of the benchmark pages (workbench/drivers/docs-page.ts): a section is replaced
 * between its own markers only, the rest of the page byte for byte, the same content twice gives the same
 * page, and a page or marker missing is refused, never appended to.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { commandLine, markdownTable, MeasuredSectionError, printedBlock, replaceMeasured, startMeasuredRun } from '../../../workbench/drivers/docs-page.js';

const PAGE = [
  '# A page\r\n',
  'Text before, with trailing spaces   \n',
  '<!-- BEGIN measured:one -->\n',
  'old one\n',
  '<!-- END measured:one -->\n',
  '\n',
  'Between — “unicode” kept.\n',
  '<!-- BEGIN measured:one-more -->\n',
  'old one-more\n',
  '<!-- END measured:one-more -->\n',
  'no newline at the end',
].join('');

function collector() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } };
}

describe('replaceMeasured', () => {
  it('replaces what lies between the markers of its id only, the rest byte for byte', () => {
    // Act
    const page = replaceMeasured(PAGE, { page: 'a.md', id: 'one' }, 'new\n\ntable');
    // Assess
    const begin = '<!-- BEGIN measured:one -->';
    const end = '<!-- END measured:one -->';
    assert.equal(page.slice(0, page.indexOf(begin) + begin.length), PAGE.slice(0, PAGE.indexOf(begin) + begin.length));
    assert.equal(page.slice(page.indexOf(end)), PAGE.slice(PAGE.indexOf(end)), 'the other section, with an id that starts the same, untouched');
    assert.equal(page, PAGE.replace('old one\n', 'new\n\ntable\n'));
  });

  it('gives the same page for the same content (idempotent), and the page itself for what it holds', () => {
    // Act
    const once = replaceMeasured(PAGE, { page: 'a.md', id: 'one-more' }, 'figures');
    const twice = replaceMeasured(once, { page: 'a.md', id: 'one-more' }, 'figures');
    const same = replaceMeasured(PAGE, { page: 'a.md', id: 'one' }, 'old one');
    // Assess
    assert.equal(twice, once);
    assert.equal(same, PAGE);
  });

  it('refuses a page without its markers, with one twice or in the wrong order, naming the page and the id', () => {
    // Prepare
    const cases: [string, RegExp][] = [
      [PAGE, /a\.md has no "<!-- BEGIN measured:two -->" … "<!-- END measured:two -->" section: nothing written/],
      ['<!-- BEGIN measured:two -->\nx\n', /a\.md has no .*measured:two/],
      ['x\n<!-- END measured:two -->\n', /a\.md has no .*measured:two/],
      ['<!-- BEGIN measured:two -->\n<!-- END measured:two -->\n<!-- BEGIN measured:two -->\n', /a\.md has more than one .*measured:two/],
      ['<!-- END measured:two -->\n<!-- BEGIN measured:two -->\n', /a\.md has END before BEGIN .*measured:two/],
    ];
    for (const [text, message] of cases) {
      // Act + Assess
      assert.throws(
        () => replaceMeasured(text, { page: 'a.md', id: 'two' }, 'figures'),
        (error: unknown) => error instanceof MeasuredSectionError && error.name === 'MeasuredSectionError' && message.test(error.message),
      );
    }
  });
});

describe('commandLine, printedBlock and markdownTable', () => {
  it('writes the npm form of a run, quoting what a shell would split', () => {
    // Act + Assess
    assert.equal(commandLine('sim', []), 'npm run sim');
    assert.equal(
      commandLine('bench', ['--scenario', 'all', '--strategies', 'c', '--write-docs']),
      'npm run bench -- --scenario all --strategies c --write-docs',
    );
    assert.equal(commandLine('bench', ['--html', "my page's.html"]), `npm run bench -- --html 'my page'\\''s.html'`);
  });

  it('fences what was printed, without the --json line that ends it', () => {
    // Act + Assess
    assert.equal(printedBlock('a\nb\n{"json":1}\n', { json: true }), '```\na\nb\n```');
    assert.equal(printedBlock('a\n  b\n', { json: false }), '```\na\n  b\n```');
    assert.equal(printedBlock('uses ``` inside\n', { json: false }), '````\nuses ``` inside\n````');
  });

  it('writes a markdown table, the columns asked aligned left, a | in a cell escaped', () => {
    // Act + Assess
    assert.equal(markdownTable(['scenario', 'calls'], [['a|b', '1.00']]), '| scenario | calls |\n|:--|--:|\n| a\\|b | 1.00 |');
    assert.equal(markdownTable(['429s', 'lost'], [['0', '0']], []), '| 429s | lost |\n|--:|--:|\n| 0 | 0 |');
  });
});

describe('startMeasuredRun', () => {
  it('writes the finished run into a copy of a page: date, machine, command, exit code and output, atomically', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'ratelane-docs-page-'));
    writeFileSync(join(dir, 'a.md'), PAGE);
    const t = collector();
    const run = startMeasuredRun(
      { section: { page: 'a.md', id: 'one' }, command: 'npm run sim -- --write-docs' },
      { ...t, env: { RATELANE_BENCHMARK_DOCS: dir } },
    );
    run.io.stdout.write('report line\n');
    // Act
    run.finish(0, printedBlock(run.printed(), { json: false }));
    // Assess
    const page = readFileSync(join(dir, 'a.md'), 'utf8');
    const section = page.slice(page.indexOf('-->\n') + 4, page.indexOf('\n<!-- END measured:one -->'));
    assert.match(section, /^- \*\*Measured\*\*: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n/);
    assert.match(section, /\n- \*\*Machine\*\*: \d+ x .+, Node \d+\.\d+\.\d+\n/);
    assert.match(section, /\n- \*\*Command\*\*: `npm run sim -- --write-docs` \(exit 0\)\n\n```\nreport line\n```$/);
    assert.equal(page.replace(section, 'old one'), PAGE, 'the rest of the page unchanged');
    assert.deepEqual(t.out, ['report line\n'], 'the output still printed');
    assert.match(t.err.join(''), /measured:one written to .*a\.md/);
    assert.deepEqual(readdirSync(dir), ['a.md'], 'no temporary file left');
  });

  it('refuses before the run when the page or its markers are missing, and writes nothing', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'ratelane-docs-page-'));
    copyFileSync(new URL('../../../docs/benchmarks/simulator.md', import.meta.url), join(dir, 'simulator.md'));
    const before = readFileSync(join(dir, 'simulator.md'), 'utf8');
    const io = { ...collector(), env: { RATELANE_BENCHMARK_DOCS: dir } };
    // Act + Assess
    assert.throws(() => startMeasuredRun({ section: { page: 'missing.md', id: 'sim' }, command: 'npm run sim' }, io), /missing\.md does not exist/);
    assert.throws(
      () => startMeasuredRun({ section: { page: 'simulator.md', id: 'simulator' }, command: 'npm run sim' }, io),
      /simulator\.md has no .*measured:simulator/,
    );
    assert.equal(readFileSync(join(dir, 'simulator.md'), 'utf8'), before);
    assert.deepEqual(readdirSync(dir), ['simulator.md']);
  });
});

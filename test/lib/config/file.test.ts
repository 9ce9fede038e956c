/**
 * The lane config file (`lib/config/file.ts`): the lanes a team declares in `ratelane.config.json` (or the
 * file `RATELANE_CONFIG` names), each checked with the lane schema, with errors that name the file, the
 * lane and the field; no file, the built-in lanes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { configuredLanes, readLaneConfigFile } from '../../../lib/config/file.js';
import { DEFAULT_LANES, LaneConfigError } from '../../../lib/config/lanes.js';

const dir = mkdtempSync(join(tmpdir(), 'ratelane-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function refusal(path: string): string {
  try {
    readLaneConfigFile(path);
  } catch (error) {
    assert.ok(error instanceof LaneConfigError, String(error));
    return error.message;
  }
  return 'no error';
}

describe('lane config file', () => {
  it('declares lanes by name and region with what differs from the defaults, a third lane included', () => {
    // Prepare
    const path = file('three.json', {
      lanes: [
        { name: 'us', region: 'us-east-1', provider: { limits: { requestsPerMinute: 900 } } },
        { name: 'eu', region: 'eu-central-1' },
        { name: 'apac', region: 'ap-southeast-2', live: { enabled: false } },
      ],
    });
    // Act
    const lanes = readLaneConfigFile(path);
    // Assess
    assert.deepEqual(Object.keys(lanes), ['us', 'eu', 'apac']);
    assert.equal(lanes.us!.provider.limits.requestsPerMinute, 900);
    assert.deepEqual(lanes.eu, DEFAULT_LANES.eu, 'a lane that changes nothing is the default lane');
    assert.equal(lanes.apac!.resources.queueName, 'ratelane-apac-jobs');
  });

  it('names the file, the lane and the field of what is wrong', () => {
    // Act / Assess
    assert.match(refusal(join(dir, 'missing.json')), /missing\.json: no such file/);
    assert.match(refusal(file('bad.json', '{ "lanes": [ ')), /bad\.json: not JSON/);
    assert.match(refusal(file('empty.json', { lanes: [] })), /empty\.json: .*declare at least one lane/s);
    assert.match(refusal(file('extra.json', { lanes: [{ name: 'us', region: 'us-east-1' }], quotas: {} })), /extra\.json: .*quotas/s);
    const wrong = refusal(
      file('wrong.json', {
        lanes: [
          { name: 'us', region: 'us-east-1' },
          { name: 'eu', region: 'eu-central-1', queue: { batchSize: 50 } },
        ],
      }),
    );
    assert.match(wrong, /wrong\.json, lanes\[1\]: lane "eu": .*queue\.batchSize/s);
    assert.match(
      refusal(
        file('twice.json', {
          lanes: [
            { name: 'us', region: 'us-east-1' },
            { name: 'us2', region: 'us-east-1' },
          ],
        }),
      ),
      /twice\.json: two lanes share a region/,
    );
  });

  it('is the named file, else RATELANE_CONFIG, else ratelane.config.json in the working folder, else the built-in lanes', () => {
    // Prepare
    const named = file('named.json', { lanes: [{ name: 'named', region: 'us-west-2' }] });
    const fromEnv = file('env.json', { lanes: [{ name: 'fromenv', region: 'us-west-1' }] });
    const project = mkdtempSync(join(dir, 'project-'));
    writeFileSync(join(project, 'ratelane.config.json'), JSON.stringify({ lanes: [{ name: 'local', region: 'eu-west-3' }] }));
    const empty = mkdtempSync(join(dir, 'empty-'));
    // Act / Assess
    assert.deepEqual(Object.keys(configuredLanes({ path: named, cwd: project, env: { RATELANE_CONFIG: fromEnv } }).lanes), ['named']);
    assert.deepEqual(Object.keys(configuredLanes({ cwd: project, env: { RATELANE_CONFIG: fromEnv } }).lanes), ['fromenv']);
    assert.deepEqual(configuredLanes({ cwd: project, env: {} }).source, join(project, 'ratelane.config.json'));
    assert.deepEqual(configuredLanes({ cwd: empty, env: {} }), { lanes: DEFAULT_LANES, source: 'built-in' });
    assert.throws(() => configuredLanes({ cwd: empty, env: { RATELANE_CONFIG: 'nope.json' } }), /nope\.json: no such file/);
  });

  it("the repository's own file declares the built-in lanes", () => {
    // Act / Assess
    assert.deepEqual(readLaneConfigFile(join(import.meta.dirname, '..', '..', '..', 'ratelane.config.json')), DEFAULT_LANES);
  });
});

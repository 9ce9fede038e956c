/**
 * A Lambda's handler is built in its environment's INIT (at import), once; a failed build is begun
 * again by the next invocation, which sees its error.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildInInit } from '../../../lib/platform/lambda-init.js';

describe('buildInInit', () => {
  it('begins the build at once, before any invocation, and builds once', async () => {
    // Prepare
    let builds = 0;
    const build = async (): Promise<string> => {
      builds++;
      return 'handler';
    };
    // Act
    const built = buildInInit(build);
    const begunAtInit = builds;
    const answers = await Promise.all([built(), built()]);
    // Assess
    assert.equal(begunAtInit, 1);
    assert.deepEqual(answers, ['handler', 'handler']);
    assert.equal(builds, 1);
  });

  it('does not fail the INIT for a failed build: the next invocation builds again and sees its error', async () => {
    // Prepare: the environment is wrong at first, then right
    let builds = 0;
    const build = async (): Promise<string> => {
      builds++;
      if (builds <= 2) throw new Error(`environment not usable (${builds})`);
      return 'handler';
    };
    // Act
    const built = buildInInit(build);
    await new Promise((resolve) => setImmediate(resolve));
    const first = await built().then(
      () => 'built',
      (error: Error) => error.message,
    );
    const second = await built();
    // Assess
    assert.equal(first, 'environment not usable (2)');
    assert.equal(second, 'handler');
    assert.equal(builds, 3);
  });
});

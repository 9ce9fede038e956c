/**
 * The residency map's HTML page (`ratelane residency --html`) in headless Chromium: from a fixture map
 * with hostile strings in every field, the page loads cleanly (no error, no request beyond itself, no
 * script run), shows the hostile strings as text, and shows the flagged places — their rows marked and
 * visible, and listed above each lane's table — with a screenshot under .cache/report-test/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renderResidencyHtml } from '../../../lib/residency/html.js';
import type { ResidencyMap, ResidencyPlace } from '../../../lib/residency/model.js';
import { assertCleanPage, HOSTILE, openPage, REPORT_TEST_DIR, useChromium, writePage } from './chromium.js';

/** A place of the fixture; inside the lane unless told. */
function place(kind: ResidencyPlace['kind'], name: string, overrides: Partial<ResidencyPlace> = {}): ResidencyPlace {
  return {
    kind,
    name,
    logicalId: `${kind}Id`,
    holds: `holds ${HOSTILE}`,
    region: 'eu-central-1',
    geography: 'eu',
    encryption: `SSE ${HOSTILE}`,
    retention: `kept ${HOSTILE}`,
    inLaneGeography: true,
    ...overrides,
  };
}

/** A map of two lanes: eu with its endpoint moved to the US and a replica outside (two flagged), us with nothing flagged. */
function fixtureMap(): ResidencyMap {
  return {
    lanes: [
      {
        lane: 'eu',
        region: 'eu-central-1',
        geography: 'eu',
        stack: null,
        source: 'config',
        synthRefusal: `lane eu cannot be deployed: ${HOSTILE}`,
        places: [
          place('bucket', `ratelane-eu-source-${HOSTILE}`),
          place('queue', 'ratelane-eu-jobs'),
          place('table', 'copy (replica in us-east-1)', { region: 'us-east-1', geography: 'us', inLaneGeography: false }),
          place('metrics', 'CloudWatch metrics', { holds: 'no document text' }),
          place('model-endpoint', 'api.openai.com', { logicalId: null, region: null, geography: 'us', inLaneGeography: false }),
        ],
        flagged: [
          { kind: 'table', name: 'copy (replica in us-east-1)', why: `outside the lane ${HOSTILE}` },
          { kind: 'model-endpoint', name: 'api.openai.com', why: `processes in us; cdk synth refuses the lane: ${HOSTILE}` },
        ],
      },
      {
        lane: 'us',
        region: 'us-east-1',
        geography: 'us',
        stack: 'ratelane-us',
        source: 'synth',
        synthRefusal: null,
        places: [place('bucket', 'ratelane-us-source', { region: 'us-east-1', geography: 'us' })],
        flagged: [],
      },
    ],
  };
}

describe('the residency page: in headless Chromium', () => {
  const browser = useChromium();

  it('loads cleanly, shows hostile strings as text and the flagged places visibly', { timeout: 60_000 }, async () => {
    // Prepare
    const map = fixtureMap();
    const file = writePage('residency.html', renderResidencyHtml(map));
    const probe = `({
      images: document.querySelectorAll('img').length,
      scripts: Array.from(document.querySelectorAll('script')).map(function (s) { return s.type; }),
      shown: document.body.textContent.includes(${JSON.stringify(HOSTILE)}),
      flaggedRows: Array.from(document.querySelectorAll('tr[data-flagged]')).filter(function (r) { return r.getBoundingClientRect().height > 0; })
        .map(function (r) { return r.closest('section').getAttribute('data-lane') + ' ' + r.cells[1].textContent; }),
      flaggedItems: Array.from(document.querySelectorAll('li[data-flag]')).filter(function (li) { return li.getBoundingClientRect().height > 0; }).length,
      flaggedCount: document.body.getAttribute('data-flagged-count'),
      usNothing: document.querySelector('section[data-lane="us"] p.ok') !== null,
      data: JSON.parse(document.getElementById('residency-data').textContent).lanes[0].places[0].name
    })`;
    // Act
    const check = await openPage(browser(), file, join(REPORT_TEST_DIR, 'residency.png'), probe);
    // Assess
    assertCleanPage(check, file);
    assert.deepEqual(check.dialogs, []);
    assert.deepEqual(check.probe, {
      images: 0,
      scripts: ['application/json'],
      shown: true,
      flaggedRows: ['eu copy (replica in us-east-1)', 'eu api.openai.com'],
      flaggedItems: 2,
      flaggedCount: '2',
      usNothing: true,
      data: `ratelane-eu-source-${HOSTILE}`,
    });
  });
});

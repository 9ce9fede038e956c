/**
 * Opens a report page in headless Chromium (Debian's `/usr/bin/chromium`, driven by puppeteer-core)
 * and reads back what a person would see: console errors, page errors, every request, the charts
 * rendered and whether each canvas holds any pixel. Saves a screenshot. Fails (never skips) when
 * Chromium is missing: CI installs it (`.ci/run`).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before } from 'node:test';
import { pathToFileURL } from 'node:url';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Where Debian's chromium package puts its binary. */
const CHROMIUM = '/usr/bin/chromium';

/** Where the report tests write their pages, profiles and screenshots. */
export const REPORT_TEST_DIR = resolve('.cache/report-test');

/** A label that would close the page's script and run code if it were not escaped. */
export const HOSTILE = '</script><img src=x onerror=alert(1)>';

/** Writes a page under .cache/report-test/ and returns its path. */
export function writePage(name: string, content: string): string {
  mkdirSync(REPORT_TEST_DIR, { recursive: true });
  const file = join(REPORT_TEST_DIR, name);
  writeFileSync(file, content);
  return file;
}

/** The flags every run of Chromium gets (this machine's network is closed: no background fetches). */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** What the page showed. */
export interface PageCheck {
  consoleErrors: string[];
  pageErrors: string[];
  /** Every URL the page requested (the page itself included). */
  requests: string[];
  failedRequests: string[];
  dialogs: string[];
  chartsRendered: string | null;
  chartsExpected: string | null;
  /** `data-chart` of every canvas, and whether it differs from a blank canvas of its size. */
  canvases: { id: string; width: number; height: number; drawn: boolean }[];
  /** What the page's own script can read of it (the expression given to {@link openPage}). */
  probe: unknown;
  screenshot: string;
}

/** A headless Chromium with a fresh profile under .cache/report-test. @throws when /usr/bin/chromium is missing */
export async function launchChromium(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: the report tests need it. Install Debian's package: ` +
        '`sudo apt-get install -y chromium` (.ci/run installs it in CI).',
    );
  }
  mkdirSync(REPORT_TEST_DIR, { recursive: true });
  const profile = mkdtempSync(join(REPORT_TEST_DIR, 'profile-'));
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, `--user-data-dir=${profile}`] });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Launches Chromium before the tests of the calling `describe` and closes it after them.
 * @returns the running browser (call it inside a test)
 */
export function useChromium(): () => Browser {
  let browser: Browser | undefined;
  let close: (() => Promise<void>) | undefined;
  before(async () => {
    ({ browser, close } = await launchChromium());
  });
  after(async () => {
    await close?.();
  });
  return () => {
    if (browser === undefined) throw new Error('Chromium is not running: call the browser inside a test');
    return browser;
  };
}

/** Reads each `canvas[data-chart]`: its size, and whether its pixels differ from a blank canvas of that size. */
const CANVAS_PROBE = `Array.from(document.querySelectorAll('canvas[data-chart]')).map(function (c) {
  var blank = document.createElement('canvas');
  blank.width = c.width; blank.height = c.height;
  return { id: c.getAttribute('data-chart'), width: c.width, height: c.height, drawn: c.width > 0 && c.height > 0 && c.toDataURL() !== blank.toDataURL() };
})`;

/**
 * Loads `file` over `file://`, waits until the page's charts were drawn (`data-charts-rendered`, 15 s
 * at most), evaluates `probe` (a JavaScript expression, run in the page) and saves a full-page screenshot as `screenshot`.
 */
export async function openPage(browser: Browser, file: string, screenshot: string, probe = 'null'): Promise<PageCheck> {
  const page = await browser.newPage();
  const check: Omit<PageCheck, 'chartsRendered' | 'chartsExpected' | 'canvases' | 'probe'> = {
    consoleErrors: [],
    pageErrors: [],
    requests: [],
    failedRequests: [],
    dialogs: [],
    screenshot,
  };
  page.on('console', (message) => {
    if (message.type() === 'error') check.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => check.pageErrors.push(String(error)));
  page.on('request', (request) => check.requests.push(request.url()));
  page.on('requestfailed', (request) => check.failedRequests.push(`${request.url()}: ${request.failure()?.errorText ?? '?'}`));
  page.on('dialog', (dialog) => {
    check.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  try {
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    await page.waitForFunction('document.body.dataset.chartsRendered !== undefined', { timeout: 15_000 }).catch(() => undefined);
    const chartsRendered = (await page.evaluate('document.body.getAttribute("data-charts-rendered")')) as string | null;
    const chartsExpected = (await page.evaluate('document.body.getAttribute("data-charts-expected")')) as string | null;
    const canvases = (await page.evaluate(CANVAS_PROBE)) as PageCheck['canvases'];
    const probed = await page.evaluate(probe);
    // A full-page capture resizes the viewport, and a responsive chart clears its canvas to redraw at the
    // new size: size the viewport to the page first and let two frames pass, so the capture shows the charts.
    const height = (await page.evaluate('document.documentElement.scrollHeight')) as number;
    await page.setViewport({ width: 1280, height: Math.min(16_000, Math.ceil(height)) });
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    await page.screenshot({ path: screenshot as `${string}.png`, fullPage: true });
    return { ...check, chartsRendered, chartsExpected, canvases, probe: probed };
  } finally {
    await page.close();
  }
}

/** The requests that went anywhere but the page itself or a `data:` URL (must be none). */
export function externalRequests(check: PageCheck, file: string): string[] {
  const self = pathToFileURL(file).href;
  return check.requests.filter((url) => url !== self && !url.startsWith('data:'));
}

/** Asserts the page loaded `file` cleanly: no console or page error, no failed and no external request. */
export function assertCleanPage(check: PageCheck, file: string): void {
  assert.deepEqual(check.consoleErrors, []);
  assert.deepEqual(check.pageErrors, []);
  assert.deepEqual(check.failedRequests, []);
  assert.deepEqual(externalRequests(check, file), []);
}

/** Asserts the page expected and rendered `expected` charts, one canvas each, none of them blank. */
export function assertChartsDrawn(check: PageCheck, expected: number): void {
  assert.equal(check.chartsExpected, String(expected));
  assert.equal(check.chartsRendered, String(expected));
  assert.equal(check.canvases.length, expected);
  for (const canvas of check.canvases) assert.ok(canvas.drawn, `canvas ${canvas.id} (${canvas.width}x${canvas.height}) is blank`);
}

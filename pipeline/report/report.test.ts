/**
 * The HTML report of a real build (the demo config, two English dialogues, espeak-ng), opened in real
 * headless Chromium (Debian `chromium`, driven by playwright-core): it loads from file:// without a
 * console error or a failed request, a click on a BARGE_IN span moves playback to the span's start,
 * and a screenshot is kept in outputs/report-screenshot.png (a CI artifact).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../config.ts';
import { copySharedBuild, sharedDemoBuild } from '../orchestration/testing/shared-build.ts';
import { writeBuildReport, type BuildReportResult } from './build-report.ts';

/** Where CI finds the screenshot. */
const SCREENSHOT = path.join(PROJECT_ROOT, 'outputs', 'report-screenshot.png');
const CHROMIUM = '/usr/bin/chromium';
/** The page's audio element, as an expression evaluated in the page. */
const AUDIO = "document.getElementById('dialogue-audio')";
const CHROMIUM_ARGUMENTS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let scratch: string;
let out: string;
let report: BuildReportResult;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-report-test-'));
  // the demo build the run shares (both languages, scored), copied: the report is written into it.
  // The Japanese datasets lose their quality.json, so the report shows scored and unscored datasets.
  out = (await copySharedBuild(await sharedDemoBuild(), scratch)).output.directory;
  for (const dataset of ['topiocqa_ja_demo', 'topiocqa_ja_demo_bargein']) await rm(path.join(out, 'data', 'ja', 'task', dataset, 'quality.json'), { force: true });
  report = await writeBuildReport(out);
}, 1_200_000); // the shared demo build may still be running in another file (pipeline/orchestration/build.test.ts DEMO_BUILD_TIMEOUT)
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('writeBuildReport', () => {
  it('writes index.html with the tables, the plots and a page per dialogue whose audio path resolves', async () => {
    expect(report.indexPath).toBe(path.join(out, 'report', 'index.html'));
    // two dialogues in every dataset the build wrote (a barge-in variant too, when the config has one)
    expect(report.datasets).toBeGreaterThanOrEqual(1);
    expect(report.dialoguePages).toBe(2 * report.datasets);
    const index = await readFile(report.indexPath, 'utf8');
    for (const text of ["Statistics (like the paper's Table 3)", "Quality (like the paper's Table 2)", 'Not scored', 'DNSMOS OVRL', 'Evaluable events', 'backchannels per minute', '-rates.svg', 'offsets-cdf-channel1-to-channel0.svg']) {
      expect(index).toContain(text);
    }
    for (const match of index.matchAll(/<img src="([^"]+)"/g)) expect(existsSync(path.join(out, 'report', match[1]!))).toBe(true);
    const pages = await readdir(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo'));
    expect(pages.sort()).toEqual(['demo_topiocqa_0001.html', 'demo_topiocqa_0002.html']);
    const page = await readFile(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo', pages[0]!), 'utf8');
    const audio = /<audio id="dialogue-audio"[^>]* src="([^"]+)"/.exec(page)![1]!;
    expect(path.resolve(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo'), audio)).toBe(path.join(out, 'data', 'en', 'task', 'topiocqa_demo', 'audio', pages[0]!.replace('.html', '.wav')));
    expect(page).not.toMatch(/https?:\/\/(?!www\.w3\.org)/); // nothing from the network
  });

  it('is byte-identical when written again', async () => {
    const first = await readFile(report.indexPath);
    const firstPage = await readFile(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo', 'demo_topiocqa_0001.html'));
    await writeBuildReport(out);
    expect(await readFile(report.indexPath)).toEqual(first);
    expect(await readFile(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo', 'demo_topiocqa_0001.html'))).toEqual(firstPage);
    expect(existsSync(path.join(out, 'report.partial'))).toBe(false);
  });
});

describe('the report in headless Chromium', () => {
  let context: BrowserContext;
  const problems: string[] = [];
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/setup-system.sh (it installs Debian's chromium)`);
    context = await chromium.launchPersistentContext(await mkdtemp(path.join(scratch, 'chromium-profile-')), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGUMENTS,
      viewport: { width: 1400, height: 900 },
    });
    context.on('page', (page) => {
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('requestfailed', (request) => {
        // leaving a page while its audio still loads aborts that request: not a fault of the page
        if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed request: ${request.url()} (${request.failure()?.errorText})`);
      });
    });
  });
  afterAll(async () => {
    await context?.close();
  });

  it('opens without console errors, and a click on a BARGE_IN span moves playback to its start', async () => {
    const page = await context.newPage();
    await page.goto(pathToFileURL(report.indexPath).href);
    await expect(page.locator('h1').textContent()).resolves.toContain('duplexsynth build');
    // every dialogue page, until one with a barge-in
    const links = await page.locator('a[href^="dialogues/"]').evaluateAll((anchors) => anchors.map((anchor) => (anchor as unknown as { href: string }).href));
    expect(links.length).toBe(report.dialoguePages);
    let clicked = false;
    for (const link of links) {
      await page.goto(link);
      await page.waitForFunction(`${AUDIO}.readyState >= 1`);
      const duration = (await page.evaluate(`${AUDIO}.duration`)) as number;
      expect(duration).toBeGreaterThan(10);
      const spans = page.locator('.event.BARGE_IN');
      if ((await spans.count()) === 0) continue;
      const span = spans.first();
      const start = Number(await span.getAttribute('data-start'));
      expect(start).toBeGreaterThan(0);
      await span.scrollIntoViewIfNeeded();
      await span.click();
      const position = (await page.evaluate(`${AUDIO}.currentTime`)) as number;
      // playback may already have moved on by a few milliseconds after the click
      expect(position).toBeGreaterThanOrEqual(start - 0.01);
      expect(position).toBeLessThan(start + 0.5);
      await page.waitForTimeout(200);
      await mkdir(path.dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT });
      await page.evaluate(`${AUDIO}.pause()`);
      clicked = true;
      break;
    }
    expect(clicked).toBe(true);
    expect(problems).toEqual([]);
    expect(existsSync(SCREENSHOT)).toBe(true);
  });
});

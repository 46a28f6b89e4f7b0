/**
 * The HTML report of a real build (the demo config, two English and two Japanese dialogues, espeak-ng
 * and Open JTalk, each with its barge-in variant; scored with the stand-in MOS scorer and split with
 * the real split stage, so every table is filled), opened in real headless Chromium (Debian `chromium`,
 * driven by playwright-core). One build serves every test of the file. The browser tests cover each
 * interaction of the listening pages: no console error or failed request; a click on an event, on a
 * waveform or on the empty timeline plays from there, on a word from the word's start, on an empty spot
 * of a lane from the time under it; scrolling the timeline while it plays is not undone; zoom, stopping
 * at the limits the page declares; the listening block covers nothing; "play this event" stops at its
 * end and loops (on a dialogue page and on the dataset's event list); mute and solo change what is
 * heard (the level after each channel's gain, on the report served by `duplexsynth report --serve`: a
 * page from a file gets only silence from Web Audio); the dataset's event list filters by type and by
 * the loader's verdict, and plays; the loader verdicts agree with the evaluable-events counts; quality
 * and rates for every dataset, one split naming, no empty column; Japanese text is drawn with glyphs,
 * not empty boxes (a CJK font, scripts/setup-system.sh). Screenshots are kept in
 * outputs/report-screenshot.png and outputs/report-screenshot-ja.png (CI artifacts).
 */
import { escapeHtml } from './html.ts';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfigFile, PROJECT_ROOT } from '../config.ts';
import { evaluableEventsReport } from '../events/evaluable-events.ts';
import { readExportDataset } from '../export/export-dataset.ts';
import { runBuild } from '../orchestration/build.ts';
import { FakeMosScorer } from '../services/mos/fake-mos-scorer.ts';
import { scoreDatasetQuality } from '../../stages/score-quality.ts';
import { applySplitToVariant, splitDatasets } from '../../stages/split-dev-test.ts';
import { buildDatasetDirectories, writeBuildReport, type BuildReportResult } from './build-report.ts';
import { datasetLoaderSettings } from './loader-verdicts.ts';
import { serveBuildReport } from './serve-report.ts';
import { PAGE_DATASET_FIELDS } from './dialogue-page.ts';
import {
  dialoguePageKey,
  dialoguePagePlan,
  pageAudioIdentity,
  PRE_RENDERED_PAGES_DIRECTORY,
  PreRenderedDialoguePages,
  renderDialoguePage,
} from './pre-rendered-pages.ts';
import { readDatasetFolder } from '../quality/dataset-files.ts';

/**
 * How far past an event's end playback may be seen, in seconds: the page checks the position once
 * per animation frame and the test samples it with timers, both late when the renderer is starved
 * (a 2-core machine running the whole test suite misses a slack of 0.15 s). Playback that does
 * not stop or loop at all runs on for seconds, so the checks still tell it apart.
 */
const FRAME_SLACK = 0.5;

/** Where CI finds the screenshots. */
const SCREENSHOT = path.join(PROJECT_ROOT, 'outputs', 'report-screenshot.png');
const SCREENSHOT_JA = path.join(PROJECT_ROOT, 'outputs', 'report-screenshot-ja.png');
const CHROMIUM = '/usr/bin/chromium';
/** The page's audio element, as an expression evaluated in the page. */
const AUDIO = "document.getElementById('dialogue-audio')";
const PLAYER = 'window.duplexsynthPlayer';
const CHROMIUM_ARGUMENTS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let scratch: string;
let out: string;
let report: BuildReportResult;
/** What the build logged, its own report (pages made while it ran), and the report written again from its output. */
let buildLog: string[];
let buildsReport: string;
let rewrittenReport: string;
const page = (language: string, dataset: string, id: string) =>
  path.join(out, 'report', 'dialogues', language, dataset, `${id}.html`);

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-report-test-'));
  out = path.join(scratch, 'out');
  const base = await loadConfigFile(DEFAULT_CONFIG_FILE);
  buildLog = [];
  await runBuild(
    {
      ...base,
      languages: ['en', 'ja'],
      corpus: { ...base.corpus, limit: 2 },
      output: { directory: out, cacheDirectory: path.join(scratch, 'cache') },
      quality: { ...base.quality, enabled: false },
    },
    { log: (line) => buildLog.push(line) },
  );
  // the build's report, its dialogue pages made while it ran, against the one written from its output
  buildsReport = path.join(scratch, 'builds-report');
  rewrittenReport = path.join(scratch, 'rewritten-report');
  await cp(path.join(out, 'report'), buildsReport, { recursive: true });
  await writeBuildReport(out);
  await cp(path.join(out, 'report'), rewrittenReport, { recursive: true });
  // quality tables and splits for every dataset, without DNSMOS's minutes: the stand-in scorer
  const directories = await buildDatasetDirectories(out);
  for (const directory of directories)
    await scoreDatasetQuality(directory, {
      dnsmosScorer: new FakeMosScorer(),
      measureLoudness: false,
      cometKiwiEnabled: false,
    });
  const splits = await splitDatasets(
    directories.filter((directory) => !directory.endsWith('_bargein')),
    { testHours: 1 / 3600, speakerDisjoint: false, unit: 'dialogue' },
  );
  for (const split of splits) await applySplitToVariant(split.report, `${split.directory}_bargein`);
  report = await writeBuildReport(out);
}, 600_000);
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('writeBuildReport', () => {
  it('writes index.html with the tables, the plots and a page per dialogue whose audio path resolves', async () => {
    expect(report.indexPath).toBe(path.join(out, 'report', 'index.html'));
    // two dialogues in every dataset the build wrote: en, ja, and their barge-in variants
    expect(report.datasets).toBe(4);
    expect(report.dialoguePages).toBe(2 * report.datasets);
    const index = await readFile(report.indexPath, 'utf8');
    for (const text of [
      "Statistics (like the paper's Table 3)",
      "Quality (like the paper's Table 2)",
      'Evaluable events',
      'backchannels per minute',
      '-rates.svg',
      'offsets-cdf-channel1-to-channel0.svg',
    ]) {
      expect(index).toContain(text);
    }
    for (const match of index.matchAll(/<img src="([^"]+)"/g))
      expect(existsSync(path.join(out, 'report', match[1]!))).toBe(true);
    const pages = await readdir(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo'));
    expect(pages.sort()).toEqual(['demo_topiocqa_0001.html', 'demo_topiocqa_0002.html']);
    const page = await readFile(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo', pages[0]!), 'utf8');
    const audio = /<audio id="dialogue-audio"[^>]* src="([^"]+)"/.exec(page)![1]!;
    expect(path.resolve(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo'), audio)).toBe(
      path.join(out, 'data', 'en', 'task', 'topiocqa_demo', 'audio', pages[0]!.replace('.html', '.wav')),
    );
    expect(page).not.toMatch(/https?:\/\/(?!www\.w3\.org)/); // nothing from the network
  });

  it('has quality and rates for every dataset (barge-in variants too), one split naming, and an event list page per dataset', async () => {
    const index = await readFile(report.indexPath, 'utf8');
    const sections = [...index.matchAll(/<section id="dataset-([^"]+)">([\s\S]*?)<\/section>/g)];
    expect(sections.map((section) => section[1])).toEqual([
      'en-topiocqa_demo',
      'en-topiocqa_demo_bargein',
      'ja-topiocqa_ja_demo',
      'ja-topiocqa_ja_demo_bargein',
    ]);
    for (const [, key, body] of sections) {
      expect(body).not.toContain('Not scored');
      expect(body).toMatch(/<td>all<\/td><td>2<\/td><td>3\.00<\/td>/); // DNSMOS OVRL of the stand-in scorer
      expect(body).toContain(`plots/${key}-rates.svg`);
      expect(body).toContain(`<td>test</td>`);
      expect(body).toContain(`<td>test_other</td>`);
      const dataset = key!.replace(/^(en|ja)-/, '');
      expect(existsSync(path.join(out, 'report', 'events', key!.slice(0, 2), `${dataset}.html`))).toBe(true);
    }
    // the benchmark's split names only: dev.jsonl is an alias of test_other.jsonl, never a name of its own
    const pages = [
      index,
      ...(await Promise.all(
        (await readdir(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo'))).map((name) =>
          readFile(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo', name), 'utf8'),
        ),
      )),
    ];
    for (const html of pages) expect(html).not.toMatch(/<td>dev<\/td>|split: dev\b/);
    expect(pages.slice(1).join('')).toMatch(/split: test_other/);
  });

  it('marks each cut-off answer of a barge-in variant with its cut time and planned text, and names the full-band masters and their rate', async () => {
    const dataset = await readExportDataset(path.join(out, 'data', 'en', 'task', 'topiocqa_demo_bargein'));
    const cut = dataset.dialogues.flatMap((dialogue) =>
      dialogue.utterances
        .filter((utterance) => utterance.cutOff !== undefined)
        .map((utterance) => ({ dialogue, utterance })),
    );
    expect(cut.length).toBeGreaterThan(0);
    for (const { dialogue, utterance } of cut) {
      const page = await readFile(
        path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo_bargein', `${dialogue.id}.html`),
        'utf8',
      );
      expect(page).toContain(
        `[cut off at ${(utterance.end / 100).toFixed(2)} s by a barge-in; planned: “${escapeHtml(utterance.cutOff!.plannedText)}”`,
      );
    }
    const base = await readFile(
      path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo', 'demo_topiocqa_0001.html'),
      'utf8',
    );
    expect(base).not.toContain('cut off at');
    expect(dataset.fullBand).not.toBeNull(); // espeak-ng speaks at 22.05 kHz, above the benchmark's 16 kHz
    expect(base).toMatch(
      new RegExp(
        `full-band master ${dataset.fullBand!.directory}/demo_topiocqa_0001\\.wav at ${dataset.fullBand!.sampleRates[0]} Hz`,
      ),
    );
    expect(await readFile(report.indexPath, 'utf8')).toContain(
      `full-band masters (${dataset.fullBand!.directory}/) at ${dataset.fullBand!.sampleRates.join(' or ')} Hz`,
    );
  });

  it('is byte-identical when written again', async () => {
    const first = await readFile(report.indexPath);
    const firstPage = await readFile(
      path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo', 'demo_topiocqa_0001.html'),
    );
    await writeBuildReport(out);
    expect(await readFile(report.indexPath)).toEqual(first);
    expect(
      await readFile(path.join(out, 'report', 'dialogues', 'en', 'topiocqa_demo', 'demo_topiocqa_0001.html')),
    ).toEqual(firstPage);
    expect(existsSync(path.join(out, 'report.partial'))).toBe(false);
  });

  it('fails naming a WAV it cannot read only after every page has settled, and leaves the previous report as it was', async () => {
    const copy = path.join(scratch, 'unreadable-wav');
    await cp(out, copy, { recursive: true });
    const index = await readFile(path.join(copy, 'report', 'index.html'));
    const otherPage = path.join(copy, 'report', 'dialogues', 'ja', 'topiocqa_ja_demo', 'demo_topiocqa_0002.html');
    const otherPageBytes = await readFile(otherPage);
    // the first page's WAV: its failure comes while the other datasets' pages are still being written
    const wav = path.join(copy, 'data', 'en', 'task', 'topiocqa_demo', 'audio', 'demo_topiocqa_0001.wav');
    await writeFile(wav, 'not a WAV file');
    await expect(writeBuildReport(copy)).rejects.toThrow(wav);
    // nothing still writes into report.partial once the call has failed
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(existsSync(path.join(copy, 'report.partial'))).toBe(false);
    expect(await readFile(path.join(copy, 'report', 'index.html'))).toEqual(index);
    expect(await readFile(otherPage)).toEqual(otherPageBytes);
  });

  it('refuses two datasets of one language and name (in two domains), whose pages would write over each other, and leaves the previous report as it was', async () => {
    const copy = path.join(scratch, 'shared-name');
    await cp(out, copy, { recursive: true });
    const index = await readFile(path.join(copy, 'report', 'index.html'));
    const task = path.join(copy, 'data', 'en', 'task', 'topiocqa_demo');
    const chat = path.join(copy, 'data', 'en', 'chat', 'topiocqa_demo');
    await cp(task, chat, { recursive: true });
    await expect(writeBuildReport(copy)).rejects.toThrow(`${chat} and ${task}: two datasets named topiocqa_demo in en`);
    expect(existsSync(path.join(copy, 'report.partial'))).toBe(false);
    expect(await readFile(path.join(copy, 'report', 'index.html'))).toEqual(index);
  });
});

/** Every file under `directory`, by its path relative to it. */
async function filesUnder(directory: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      files.set(
        path.relative(directory, path.join(entry.parentPath, entry.name)),
        await readFile(path.join(entry.parentPath, entry.name)),
      );
  }
  return files;
}

describe('dialogue pages made while the build runs (pre-rendered-pages.ts)', () => {
  it('the build makes every dialogue page as the dialogue is written, and its report is byte for byte the one written from its output afterwards', async () => {
    expect(buildLog).toContainEqual(
      expect.stringMatching(/^report: .*index\.html \(8 of 8 dialogue pages made during the build\)$/),
    );
    const made = await filesUnder(buildsReport);
    const again = await filesUnder(rewrittenReport);
    expect([...made.keys()].sort()).toEqual([...again.keys()].sort());
    expect([...made.keys()].filter((file) => file.startsWith('dialogues')).length).toBe(8);
    for (const [file, bytes] of made) expect(bytes.equals(again.get(file)!), file).toBe(true);
    expect(existsSync(path.join(out, PRE_RENDERED_PAGES_DIRECTORY))).toBe(false);
  });

  it('hands the report a page only when it was made from the same inputs: split, dataset fields, links and the WAV (its sha256, inode, length, time)', async () => {
    const directory = path.join(out, 'data', 'en', 'task', 'topiocqa_demo');
    const dataset = await readExportDataset(directory);
    const dialogue = dataset.dialogues[0]!;
    const sha256 = (await readDatasetFolder(directory)).dialogues[0]!.audioSha256!;
    const { page, links } = dialoguePagePlan(out, dataset, dialogue);
    const target = (name: string) => path.join(scratch, 'taken', name, page);
    const pages = await PreRenderedDialoguePages.open(out);
    try {
      await pages.add(out, dataset, dialogue, dialogue.audioFile, sha256);
      expect(await pages.take(page, dataset, dialogue, links, sha256, target('same'))).toBe(true);
      expect(await readFile(target('same'), 'utf8')).toBe(await renderDialoguePage(dataset, dialogue, links));

      // each differing input: not taken (the report makes that page)
      const differing: [string, Parameters<PreRenderedDialoguePages['take']>][] = [
        [
          'split',
          [
            page,
            dataset,
            { ...dialogue, split: dialogue.split === 'test' ? 'dev' : 'test' },
            links,
            sha256,
            target('split'),
          ],
        ],
        [
          'full-band rates',
          [
            page,
            { ...dataset, fullBand: { directory: 'audio_fullband', sampleRates: [22050, 48000] } },
            dialogue,
            links,
            sha256,
            target('full-band'),
          ],
        ],
        ['links', [page, dataset, dialogue, { ...links, index: '../index.html' }, sha256, target('links')]],
        ['sha256', [page, dataset, dialogue, links, '0'.repeat(64), target('sha256')]],
        ['no sha256', [page, dataset, dialogue, links, null, target('no-sha256')]],
      ];
      for (const [what, call] of differing) {
        await pages.add(out, dataset, dialogue, dialogue.audioFile, sha256);
        expect(await pages.take(...call), what).toBe(false);
        expect(existsSync(call[5]), what).toBe(false);
      }
      // every field the page reads from its dataset is in the key
      const audio = await pageAudioIdentity(dialogue.audioFile, sha256);
      const key = dialoguePageKey(dataset, dialogue, links, audio);
      for (const field of PAGE_DATASET_FIELDS)
        expect(dialoguePageKey({ ...dataset, [field]: `${field} changed` }, dialogue, links, audio), field).not.toBe(
          key,
        );

      // the same bytes in a new file (rewritten in place: a new time; replaced: a new inode)
      const wav = path.join(scratch, 'pre-rendered-wav.wav');
      await cp(dialogue.audioFile, wav);
      const onCopy = { ...dialogue, audioFile: wav };
      const copyLinks = dialoguePagePlan(out, dataset, onCopy).links;
      await pages.add(out, dataset, onCopy, wav, sha256);
      await new Promise((resolve) => setTimeout(resolve, 20));
      await writeFile(wav, await readFile(wav));
      expect(await pages.take(page, dataset, onCopy, copyLinks, sha256, target('rewritten'))).toBe(false);
      await pages.add(out, dataset, onCopy, wav, sha256);
      await writeFile(`${wav}.new`, await readFile(wav));
      await rename(`${wav}.new`, wav);
      expect(await pages.take(page, dataset, onCopy, copyLinks, sha256, target('replaced'))).toBe(false);

      // a page it cannot make is counted and left to the report
      await writeFile(wav, 'not a WAV file');
      await pages.add(out, dataset, onCopy, wav, sha256);
      expect(pages.failures).toBe(1);
      expect(await pages.take(page, dataset, onCopy, copyLinks, sha256, target('unreadable'))).toBe(false);
      expect(pages.taken).toBe(1);
    } finally {
      await pages.discard();
    }
    expect(existsSync(pages.directory)).toBe(false);
  });
});

describe('the report in headless Chromium', () => {
  let context: BrowserContext;
  const problems: string[] = [];
  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: run scripts/setup-system.sh (it installs Debian's chromium)`);
    context = await chromium.launchPersistentContext(await mkdtemp(path.join(scratch, 'chromium-profile-')), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGUMENTS,
      viewport: { width: 1400, height: 900 },
      // the tests drive pages with expressions evaluated in them, which the served report's
      // Content-Security-Policy forbids ('unsafe-eval'); its headers are tested in serve-report.test.ts
      bypassCSP: true,
    });
    context.on('page', (opened) => {
      opened.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
      });
      opened.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      opened.on('requestfailed', (request) => {
        // leaving a page while its audio still loads aborts that request: not a fault of the page
        if (request.failure()?.errorText !== 'net::ERR_ABORTED')
          problems.push(`failed request: ${request.url()} (${request.failure()?.errorText})`);
      });
    });
  });
  afterAll(async () => {
    await context?.close();
    expect(problems).toEqual([]);
  });

  /** A page of the report (a file, or a URL of the served report), its audio's metadata loaded unless `preloaded` is false. */
  async function open(file: string, preloaded = true): Promise<Page> {
    const opened = await context.newPage();
    await opened.goto(file.startsWith('http') ? file : pathToFileURL(file).href);
    if (preloaded) await opened.waitForFunction(`${AUDIO}.readyState >= 1`);
    return opened;
  }
  const currentTime = async (opened: Page) => (await opened.evaluate(`${AUDIO}.currentTime`)) as number;
  const paused = async (opened: Page) => (await opened.evaluate(`${AUDIO}.paused`)) as boolean;
  /** Records, in the page, where each seek of the audio goes (its position at `seeking`, seconds). */
  const recordSeeks = (opened: Page) =>
    opened.evaluate(
      `window.sought = []; ${AUDIO}.addEventListener('seeking', () => window.sought.push(${AUDIO}.currentTime))`,
    );
  /** The seeks recorded since the last call, oldest first (waits up to 5 s for the first: `seeking` fires after the click returns). */
  const seeks = async (opened: Page) => {
    await opened.waitForFunction('window.sought.length > 0', undefined, { timeout: 5000 }).catch(() => {});
    return (await opened.evaluate('window.sought.splice(0)')) as number[];
  };

  it('opens without console errors, and a click on a BARGE_IN span moves playback to its start', async () => {
    const opened = await context.newPage();
    await opened.goto(pathToFileURL(report.indexPath).href);
    await expect(opened.locator('h1').textContent()).resolves.toContain('duplexsynth build');
    // every dialogue page, until one with a barge-in
    const links = await opened
      .locator('a[href^="dialogues/"]')
      .evaluateAll((anchors) => anchors.map((anchor) => (anchor as unknown as { href: string }).href));
    expect(links.length).toBe(report.dialoguePages);
    let clicked = false;
    for (const link of links) {
      await opened.goto(link);
      await opened.waitForFunction(`${AUDIO}.readyState >= 1`);
      const duration = (await opened.evaluate(`${AUDIO}.duration`)) as number;
      expect(duration).toBeGreaterThan(10);
      const spans = opened.locator('.event.BARGE_IN');
      if ((await spans.count()) === 0) continue;
      const span = spans.first();
      const start = Number(await span.getAttribute('data-start'));
      expect(start).toBeGreaterThan(0);
      await span.scrollIntoViewIfNeeded();
      await span.click();
      const position = await currentTime(opened);
      // playback may already have moved on by a few milliseconds after the click
      expect(position).toBeGreaterThanOrEqual(start - 0.01);
      expect(position).toBeLessThan(start + 0.5);
      await opened.waitForTimeout(200);
      await mkdir(path.dirname(SCREENSHOT), { recursive: true });
      await opened.screenshot({ path: SCREENSHOT });
      await opened.evaluate(`${AUDIO}.pause()`);
      clicked = true;
      break;
    }
    expect(clicked).toBe(true);
    await opened.close();
    expect(existsSync(SCREENSHOT)).toBe(true);
  });

  it('timeline: a click on a waveform or the empty ruler plays from there; scrolling while it plays stays; zoom; the listening block covers nothing', async () => {
    const opened = await open(page('en', 'topiocqa_demo', 'demo_topiocqa_0001'));
    const pixelsPerSecond = (await opened.evaluate(`${PLAYER}.pixelsPerSecond`)) as number;
    expect(pixelsPerSecond).toBe(120);
    // a click on the first lane's waveform, 600 px from the timeline's start: 5 s
    await opened
      .locator('.lane .waveform')
      .first()
      .click({ position: { x: 600, y: 10 } });
    expect(await currentTime(opened)).toBeGreaterThanOrEqual(600 / pixelsPerSecond - 0.01);
    expect(await currentTime(opened)).toBeLessThan(600 / pixelsPerSecond + 0.5);
    // the ruler, where no event or word is: 2.5 s
    await opened.locator('.ruler').click({ position: { x: 300, y: 12 } });
    expect(await currentTime(opened)).toBeGreaterThanOrEqual(2.49);
    expect(await currentTime(opened)).toBeLessThan(3);
    expect(await paused(opened)).toBe(false);

    // the user scrolls the timeline far ahead of the playhead while it plays: the view stays there
    const scroller = opened.locator('#scroller');
    const box = (await scroller.boundingBox())!;
    await opened.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await opened.mouse.wheel(2400, 0);
    await opened.waitForFunction("document.getElementById('scroller').scrollLeft > 1000");
    const scrolledTo = (await opened.evaluate("document.getElementById('scroller').scrollLeft")) as number;
    const before = await currentTime(opened);
    await opened.waitForTimeout(800);
    expect(await currentTime(opened)).toBeGreaterThan(before + 0.3); // still playing
    expect((await opened.evaluate("document.getElementById('scroller').scrollLeft")) as number).toBeCloseTo(
      scrolledTo,
      0,
    );
    expect(await opened.evaluate(`${PLAYER}.follow`)).toBe(false);
    expect(await opened.locator('#follow').getAttribute('aria-pressed')).toBe('false');
    // a click that plays follows the playhead again
    await opened.locator('.ruler').click({ position: { x: scrolledTo + 100, y: 12 } });
    expect(await opened.evaluate(`${PLAYER}.follow`)).toBe(true);

    // zoom: every span twice as wide, then a quarter
    const span = opened.locator('.event.TURN').first();
    const width = (await span.boundingBox())!.width;
    await opened.locator('#zoom-in').click();
    expect(await opened.evaluate(`${PLAYER}.pixelsPerSecond`)).toBe(240);
    expect((await span.boundingBox())!.width).toBeCloseTo(2 * width, 0);
    await opened.locator('#zoom-out').click();
    await opened.locator('#zoom-out').click();
    expect(await opened.evaluate(`${PLAYER}.pixelsPerSecond`)).toBe(60);
    expect((await span.boundingBox())!.width).toBeCloseTo(width / 2, 0);
    await expect(opened.locator('#zoom-level').textContent()).resolves.toBe('60 px/s');

    // the page scrolled to the end: the player and the timeline are both in view, one below the other,
    // and the timeline is what is under its own middle
    await opened.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    const player = (await opened.locator('.player').boundingBox())!;
    const timeline = (await scroller.boundingBox())!;
    expect(player.y).toBeGreaterThanOrEqual(0);
    expect(timeline.y).toBeGreaterThanOrEqual(player.y + player.height - 1);
    expect(timeline.y + timeline.height).toBeLessThanOrEqual(900);
    expect(
      await opened.evaluate(
        `document.getElementById('timeline').contains(document.elementFromPoint(${timeline.x + 200}, ${timeline.y + timeline.height / 2}))`,
      ),
    ).toBe(true);
    // a table row scrolled into view lands below the listening block, not under it
    const row = opened.locator('table.events-table tr').nth(20);
    await row.evaluate((element) => element.scrollIntoView({ block: 'start' }));
    const listening = (await opened.locator('#listening').boundingBox())!;
    expect((await row.boundingBox())!.y).toBeGreaterThanOrEqual(listening.y + listening.height - 1);
    await opened.evaluate(`${AUDIO}.pause()`);
    await opened.close();
  });

  it('a click on a word plays from the start of that word, not from the time under the pointer', async () => {
    const opened = await open(page('en', 'topiocqa_demo', 'demo_topiocqa_0001'));
    await recordSeeks(opened);
    const pixelsPerSecond = (await opened.evaluate(`${PLAYER}.pixelsPerSecond`)) as number;
    // a word of the system lane at least 0.3 s long, away from the start (the sticky lane label covers that)
    const words = opened.locator('.lane[data-channel="0"] .word');
    let chosen = -1;
    for (let index = 3; index < (await words.count()); index += 1) {
      const [start, end] = /\[([\d.]+), ([\d.]+)\]/
        .exec((await words.nth(index).getAttribute('title'))!)!
        .slice(1)
        .map(Number);
      if (end! - start! >= 0.3) {
        chosen = index;
        break;
      }
    }
    expect(chosen).toBeGreaterThanOrEqual(0);
    const word = words.nth(chosen);
    const start = Number(await word.getAttribute('data-start'));
    const width = (await word.boundingBox())!.width;
    expect(width).toBeGreaterThanOrEqual(0.3 * pixelsPerSecond - 1);
    // near its right end: the time under the pointer is at least 0.25 s after the word's start
    await word.click({ position: { x: width - 4, y: 5 } });
    const sought = await seeks(opened);
    expect(sought).toHaveLength(1);
    expect(sought[0]).toBeCloseTo(start, 3);
    expect(await paused(opened)).toBe(false);
    expect(await opened.evaluate(`${PLAYER}.follow`)).toBe(true);
    await opened.evaluate(`${AUDIO}.pause()`);
    await opened.close();
  });

  it('a click on an empty spot of a lane (no word, no event, not the waveform) plays from the time under the pointer', async () => {
    const opened = await open(page('en', 'topiocqa_demo', 'demo_topiocqa_0001'));
    await recordSeeks(opened);
    const pixelsPerSecond = (await opened.evaluate(`${PLAYER}.pixelsPerSecond`)) as number;
    await opened.locator('.lane[data-channel="1"]').scrollIntoViewIfNeeded();
    // the first point, 300 px or more into the timeline, where the user lane's row of words or its
    // row of TURN_SHIFT/TURN_HOLD/BARGE_IN spans shows the lane itself
    const spot = (await opened.evaluate(`(() => {
      const lane = document.querySelector('.lane[data-channel="1"]');
      const timeline = document.getElementById('timeline');
      const left = timeline.getBoundingClientRect().left;
      const scroller = document.getElementById('scroller').getBoundingClientRect();
      const pixelsPerSecond = Number(getComputedStyle(timeline).getPropertyValue('--pixels-per-second'));
      for (const row of [lane.querySelector('.words'), lane.querySelector('.event-rows')]) {
        const box = row.getBoundingClientRect();
        const y = row.classList.contains('words') ? box.top + box.height / 2 : box.top + 44;
        for (let x = scroller.left + 300; x < scroller.right - 10; x += 7) {
          if (document.elementFromPoint(x, y) === row) return { x, y, seconds: (x - left) / pixelsPerSecond, row: row.className };
        }
      }
      return null;
    })()`)) as { x: number; y: number; seconds: number; row: string } | null;
    expect(spot).not.toBeNull();
    expect(spot!.seconds).toBeGreaterThanOrEqual(300 / pixelsPerSecond - 0.01);
    await opened.mouse.click(spot!.x, spot!.y);
    const sought = await seeks(opened);
    expect(sought, `a click on the lane's ${spot!.row}`).toHaveLength(1);
    expect(sought[0]).toBeCloseTo(spot!.seconds, 2);
    expect(await paused(opened)).toBe(false);
    await opened.evaluate(`${AUDIO}.pause()`);
    await opened.close();
  });

  it('zoom stops at the limits the page declares, and its button at that limit is disabled', async () => {
    const opened = await open(page('en', 'topiocqa_demo', 'demo_topiocqa_0001'));
    const { min, max } = (await opened.evaluate(`${PLAYER}.zoomLimits`)) as { min: number; max: number };
    const initial = (await opened.evaluate(`${PLAYER}.pixelsPerSecond`)) as number;
    expect(min).toBeLessThan(initial);
    expect(max).toBeGreaterThan(initial);
    const span = opened.locator('.event.TURN').first();
    const title = (await span.getAttribute('title'))!;
    const [from, to] = /\[([\d.]+), ([\d.]+)\]/.exec(title)!.slice(1).map(Number);
    const zoomTo = async (button: '#zoom-in' | '#zoom-out', limit: number) => {
      // each click doubles or halves: enough clicks to reach the limit, then the button is disabled
      const clicks = Math.ceil(
        Math.abs(Math.log2(limit / ((await opened.evaluate(`${PLAYER}.pixelsPerSecond`)) as number))),
      );
      for (let click = 0; click < clicks; click += 1) await opened.locator(button).click();
      expect(await opened.evaluate(`${PLAYER}.pixelsPerSecond`)).toBe(limit);
      await expect(opened.locator('#zoom-level').textContent()).resolves.toBe(`${Math.round(limit)} px/s`);
      expect(await opened.locator(button).isDisabled()).toBe(true);
      // a click that reaches the disabled button anyway (a script) changes nothing
      await opened.locator(button).dispatchEvent('click');
      expect(await opened.evaluate(`${PLAYER}.pixelsPerSecond`)).toBe(limit);
      expect((await span.boundingBox())!.width).toBeCloseTo(Math.max(2, (to! - from!) * limit), 0);
    };
    await zoomTo('#zoom-in', max);
    expect(await opened.locator('#zoom-out').isDisabled()).toBe(false);
    await zoomTo('#zoom-out', min);
    expect(await opened.locator('#zoom-in').isDisabled()).toBe(false);
    await opened.close();
  });

  it('events table: one column per header, a loader verdict per event; "play this event" stops at its end, and loops', async () => {
    const opened = await open(page('en', 'topiocqa_demo', 'demo_topiocqa_0001'));
    const table = opened.locator('table.events-table').first();
    const headers = await table.locator('th').allTextContents();
    expect(headers).toEqual(['event', 'channel', 'start (s)', 'end (s)', 'benchmark loader', 'play']);
    const cellCounts = await table.locator('tr').evaluateAll((rows) => rows.map((row) => row.children.length));
    expect(new Set(cellCounts)).toEqual(new Set([headers.length]));
    const verdicts = await table.locator('.verdict').allTextContents();
    expect(verdicts.every((text) => text.trim().length > 0)).toBe(true);
    expect(verdicts).toContain('kept');
    expect(verdicts.some((text) => text.startsWith('dropped: short-pause-ignored'))).toBe(true);

    // a TURN_SHIFT between 0.3 and 2 s long
    const buttons = table.locator('tr:has(td:first-child:text-is("TURN_SHIFT")) button.play-event');
    let chosen = -1;
    for (let index = 0; index < (await buttons.count()); index += 1) {
      const [start, end] = [
        Number(await buttons.nth(index).getAttribute('data-play-start')),
        Number(await buttons.nth(index).getAttribute('data-play-end')),
      ];
      if (end - start >= 0.3 && end - start <= 2) {
        chosen = index;
        break;
      }
    }
    expect(chosen).toBeGreaterThanOrEqual(0);
    const button = buttons.nth(chosen);
    const [start, end] = [
      Number(await button.getAttribute('data-play-start')),
      Number(await button.getAttribute('data-play-end')),
    ];
    const clickedAt = Date.now();
    await button.click();
    await opened.waitForFunction(`${AUDIO}.paused`, undefined, { timeout: 10_000 });
    const playedFor = (Date.now() - clickedAt) / 1000;
    expect(playedFor).toBeGreaterThanOrEqual(end - start - 0.1); // it played the span…
    const stoppedAt = await currentTime(opened);
    expect(stoppedAt).toBeGreaterThanOrEqual(end); // …to its end, and stopped within a few frames of it
    expect(stoppedAt).toBeLessThan(end + FRAME_SLACK);

    // loop: still playing, inside the span, after more than its length
    await opened.locator('#loop').check();
    await button.click();
    await opened.waitForTimeout((end - start) * 1000 + 700);
    expect(await paused(opened)).toBe(false);
    const looping = await currentTime(opened);
    expect(looping).toBeGreaterThanOrEqual(start);
    expect(looping).toBeLessThan(end + FRAME_SLACK);
    // loop off: it stops at the next end
    await opened.locator('#loop').uncheck();
    await opened.waitForFunction(`${AUDIO}.paused`, undefined, { timeout: 10_000 });
    expect(await currentTime(opened)).toBeLessThan(end + FRAME_SLACK);
    await opened.close();
  });

  it('mute and solo per channel: off on a page from a file (the browser hands it silence), and on the served report what is heard of each channel (its level after its gain) follows the buttons', async () => {
    const fromFile = await open(page('en', 'topiocqa_demo', 'demo_topiocqa_0001'));
    expect(
      await fromFile
        .locator('button.solo, button.mute')
        .evaluateAll((buttons) => buttons.map((button) => (button as unknown as { disabled: boolean }).disabled)),
    ).toEqual([true, true, true, true]);
    expect(await fromFile.locator('button.solo').first().getAttribute('title')).toContain(
      'duplexsynth report OUT --serve',
    );
    await fromFile.close();
    const server = await serveBuildReport(out);
    const opened = await open(server.url.replace('index.html', 'dialogues/en/topiocqa_demo/demo_topiocqa_0001.html'));
    // the middle of the system's first long TURN, where the system speaks
    const turns = opened.locator('.lane[data-channel="0"] .event.TURN');
    let target = -1;
    for (let index = 0; index < (await turns.count()); index += 1) {
      const title = (await turns.nth(index).getAttribute('title'))!;
      const [, from, to] = /\[([\d.]+), ([\d.]+)\]/.exec(title)!.map(Number);
      if (to! - from! > 3) {
        target = from! + 1;
        break;
      }
    }
    expect(target).toBeGreaterThan(0);
    const levels = async () => {
      await opened.waitForTimeout(250);
      return (await opened.evaluate(`${PLAYER}.levels()`)) as [number, number];
    };
    const playAt = async (time: number) => {
      await opened.evaluate(`${AUDIO}.currentTime = ${time}; ${AUDIO}.play()`);
      await opened.waitForFunction(`!${AUDIO}.paused && ${AUDIO}.currentTime > ${time + 0.1}`);
    };
    // the system channel heard: back to the target each time (a slow machine may have played past the
    // turn meanwhile), then up to 10 s for the level to show (the analyser's frames are late when the
    // renderer is starved)
    const systemHeard = async () => {
      await playAt(target);
      await opened.waitForFunction(`${PLAYER}.levels()[0] > 0.001`, undefined, { timeout: 10_000 });
    };
    // solo the system channel (a click: the audio graph starts with it)
    await opened.locator('button.solo[data-channel="0"]').click();
    await systemHeard();
    let [system, user] = await levels();
    expect(user).toBe(0);
    expect(await opened.locator('button.solo[data-channel="0"]').getAttribute('aria-pressed')).toBe('true');
    // mute the soloed channel: nothing of it is heard
    await opened.locator('button.mute[data-channel="0"]').click();
    [system, user] = await levels();
    expect(system).toBe(0);
    // unmute, unsolo: the system is heard again
    await opened.locator('button.mute[data-channel="0"]').click();
    await opened.locator('button.solo[data-channel="0"]').click();
    await systemHeard();
    // solo the user while the system speaks: the system is silenced
    await opened.locator('button.solo[data-channel="1"]').click();
    [system] = await levels();
    expect(system).toBe(0);
    await opened.evaluate(`${AUDIO}.pause()`);
    await opened.close();
    await server.close();
  });

  it("the dataset's event list filters by type and by the loader's verdict, agrees with the evaluable-events counts, and plays an event to its end", async () => {
    const opened = await open(path.join(out, 'report', 'events', 'en', 'topiocqa_demo_bargein.html'), false);
    const dataset = await readExportDataset(path.join(out, 'data', 'en', 'task', 'topiocqa_demo_bargein'));
    const count = (type: string) =>
      dataset.dialogues.reduce(
        (sum, dialogue) =>
          sum + dialogue.events[0].concat(dialogue.events[1]).filter((event) => event.event === type).length,
        0,
      );
    const visible = () => opened.locator('tr[data-type]:visible');
    // only BARGE_IN
    for (const type of ['TURN_SHIFT', 'TURN_HOLD', 'BC', 'SHORTPAUSE']) {
      const box = opened.locator(`input[name="type"][value="${type}"]`);
      if ((await box.count()) > 0) await box.uncheck();
    }
    const bargeIns = count('BARGE_IN');
    expect(bargeIns).toBeGreaterThan(0);
    expect(await visible().count()).toBe(bargeIns);
    expect(
      new Set(
        await visible().evaluateAll((rows) =>
          rows.map((row) => (row as unknown as { dataset: Record<string, string> }).dataset.type),
        ),
      ),
    ).toEqual(new Set(['BARGE_IN']));
    await expect(opened.locator('#shown-count').textContent()).resolves.toBe(String(bargeIns));
    // kept with context: as many as the evaluable-events report of the same loader setting counts
    const withContext = datasetLoaderSettings(dataset).find((setting) => setting.settings.useContext)!;
    const samples = evaluableEventsReport(withContext.name, withContext.settings, dataset.dialogues).byType.BARGE_IN
      .samples;
    const keptRows = await visible().evaluateAll(
      (rows) =>
        rows.filter((row) =>
          ['all', 'some'].includes((row as unknown as { dataset: Record<string, string> }).dataset.kept!),
        ).length,
    );
    expect(keptRows).toBe(samples);
    // a barge-in variant is loaded with --ignored-events TURN_SHIFT,TURN_HOLD,BC (scripts/pipe.sh)
    await opened.locator('input[name="type"][value="TURN_SHIFT"]').check();
    await opened.locator('select[name="loader"]').selectOption('none');
    const dropped = await opened.locator('tr[data-type="TURN_SHIFT"]:visible .verdict').allTextContents();
    expect(dropped).toHaveLength(count('TURN_SHIFT'));
    expect(new Set(dropped)).toEqual(new Set(['dropped: event-type-ignored']));

    // ▶ on the second dialogue's first shown row: that dialogue's WAV, from the span's start to its end
    await opened.locator('select[name="loader"]').selectOption('any');
    const button = opened
      .locator('tr[data-type="BARGE_IN"]:visible:has(a:text-is("demo_topiocqa_0002")) button.play-event')
      .first();
    const [start, end] = [
      Number(await button.getAttribute('data-play-start')),
      Number(await button.getAttribute('data-play-end')),
    ];
    await button.click();
    await opened.waitForFunction(`!${AUDIO}.paused`);
    expect(await opened.evaluate(`${AUDIO}.getAttribute('src')`)).toMatch(
      /topiocqa_demo_bargein\/audio\/demo_topiocqa_0002\.wav$/,
    );
    await opened.waitForFunction(`${AUDIO}.paused`, undefined, { timeout: 10_000 });
    const stoppedAt = await currentTime(opened);
    expect(stoppedAt).toBeGreaterThanOrEqual(end);
    expect(stoppedAt).toBeLessThan(end + FRAME_SLACK);
    expect(end).toBeGreaterThan(start);
    await opened.close();
  });

  it("the dataset's event list loops an event: at its end it starts again at its start while loop is on, and stops at its end once loop is off", async () => {
    const opened = await open(path.join(out, 'report', 'events', 'en', 'topiocqa_demo.html'), false);
    // a shown event between 0.3 and 2 s long, of the second dialogue (another WAV than the one loaded)
    const buttons = opened.locator('tr[data-type]:visible:has(a:text-is("demo_topiocqa_0002")) button.play-event');
    let chosen = -1;
    for (let index = 0; index < (await buttons.count()); index += 1) {
      const [start, end] = [
        Number(await buttons.nth(index).getAttribute('data-play-start')),
        Number(await buttons.nth(index).getAttribute('data-play-end')),
      ];
      if (end - start >= 0.3 && end - start <= 2) {
        chosen = index;
        break;
      }
    }
    expect(chosen).toBeGreaterThanOrEqual(0);
    const button = buttons.nth(chosen);
    const [start, end] = [
      Number(await button.getAttribute('data-play-start')),
      Number(await button.getAttribute('data-play-end')),
    ];
    // the audio's position every 5 ms, in the page
    await opened.evaluate(`window.positions = []; setInterval(() => window.positions.push(${AUDIO}.currentTime), 5)`);
    const positions = async () => (await opened.evaluate('window.positions.splice(0)')) as number[];
    await opened.locator('#loop').check();
    await button.click();
    await opened.waitForFunction(`!${AUDIO}.paused`);
    await positions(); // the start of the playback: the positions of the previous source
    // until it has gone back once (a starved renderer plays slower than the clock, so no
    // fixed wait), then half a span more: it went back to the start each time it reached the end
    await opened.waitForFunction(
      'window.positions.some((position, index, all) => index > 0 && position < all[index - 1])',
      undefined,
      { timeout: 30_000 },
    );
    await opened.waitForTimeout((end - start) * 500);
    expect(await paused(opened)).toBe(false);
    const looped = await positions();
    const backs = looped.flatMap((position, index) =>
      index > 0 && position < looped[index - 1]! ? [{ from: looped[index - 1]!, to: position }] : [],
    );
    expect(backs.length).toBeGreaterThanOrEqual(1);
    for (const back of backs) {
      expect(back.from).toBeGreaterThanOrEqual(end - FRAME_SLACK); // it went back at the end…
      expect(back.to).toBeGreaterThanOrEqual(start); // …to the start
      expect(back.to).toBeLessThan(start + FRAME_SLACK);
    }
    expect(Math.max(...looped)).toBeLessThan(end + FRAME_SLACK);
    expect(Math.min(...looped)).toBeGreaterThanOrEqual(start);
    // loop off: it stops at the next end and stays there
    await opened.locator('#loop').uncheck();
    await opened.waitForFunction(`${AUDIO}.paused`, undefined, { timeout: 10_000 });
    const stoppedAt = await currentTime(opened);
    expect(stoppedAt).toBeGreaterThanOrEqual(end);
    expect(stoppedAt).toBeLessThan(end + FRAME_SLACK);
    await opened.waitForTimeout(300);
    expect(await currentTime(opened)).toBe(stoppedAt);
    await opened.close();
  });

  it('draws Japanese words with glyphs, not empty boxes (a CJK font is installed)', async () => {
    const opened = await open(page('ja', 'topiocqa_ja_demo', 'demo_topiocqa_0001'));
    expect(await opened.evaluate('document.documentElement.lang')).toBe('ja');
    // an utterance's text, drawn as is and as private-use characters (no font has glyphs for them: each
    // is drawn as the missing-glyph box); with a CJK font the two images differ, without one they are
    // the same boxes
    const cell = opened.locator('table.events-table').nth(1).locator('tr').nth(1).locator('td').nth(4);
    const text = ((await cell.textContent()) ?? '').trim();
    expect(text).toMatch(/[\u3040-\u30ff\u4e00-\u9fff]/);
    const sample = [...text]
      .filter((char) => /[\u3040-\u30ff\u4e00-\u9fff]/.test(char))
      .slice(0, 6)
      .join('');
    const probe = async (content: string) => {
      await cell.evaluate((element, value) => {
        element.textContent = value;
      }, content);
      return cell.screenshot();
    };
    const drawn = await probe(sample);
    const boxes = await probe(String.fromCodePoint(...[...sample].map((_, index) => 0xe000 + index)));
    expect(drawn.equals(boxes)).toBe(false);
    await cell.evaluate((element, value) => {
      element.textContent = value;
    }, text);
    await mkdir(path.dirname(SCREENSHOT_JA), { recursive: true });
    await opened.screenshot({ path: SCREENSHOT_JA });
    await opened.close();
  });
});

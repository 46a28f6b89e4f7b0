/**
 * One dialogue's page of the report: a listening block that stays on screen (the player with mute and
 * solo per channel, loop, zoom and follow controls, above a two-lane timeline: user lane, system lane,
 * each channel's waveform, its benchmark events as coloured spans — row 1 TURN/BC, row 2 SHORTPAUSE,
 * row 3 TURN_SHIFT/TURN_HOLD/BARGE_IN — and its words under the lane), then a table of the events with
 * a "play this event" button and what the benchmark's loader does with each (kept, or dropped and why),
 * and the utterances. Every span, word and table time carries `data-start` (seconds); the timeline's
 * positions are in seconds times a CSS variable `--pixels-per-second`, so zooming is one variable;
 * assets/dialogue.js does the playing. Static HTML; the audio is the dataset's own WAV, referenced by a
 * relative path, so the page works from `file://` and offline.
 */
import type { BenchmarkEvent, Channel } from '../model/types.ts';
import { channelOrder, type ExportDataset, type ExportDialogue } from '../export/export-dataset.ts';
import { escapeHtml, htmlPage, htmlTable, type Cell } from './html.ts';
import {
  benchmarkSplitName,
  datasetLoaderSettings,
  eventSpanSeconds,
  formatVerdicts,
  loaderVerdicts,
  verdictKey,
} from './loader-verdicts.ts';
import { waveformPath, type WaveformEnvelope } from './waveform.ts';

/**
 * The dataset fields a dialogue page shows: the page takes its dataset as a {@link PageDataset}, so it
 * cannot read others (pre-rendered-pages.ts keys a page by these).
 */
export const PAGE_DATASET_FIELDS = [
  'dataset',
  'language',
  'domain',
  'channels',
  'roles',
  'sampleRate',
  'fullBand',
] as const;

/** What a dialogue page takes from its dataset. */
export type PageDataset = Pick<ExportDataset, (typeof PAGE_DATASET_FIELDS)[number]>;

/** Horizontal scale of the timeline at zoom 1, pixels per second (the waveform's resolution). */
export const PIXELS_PER_SECOND = 120;
/** Width of one waveform column at zoom 1, pixels. */
const COLUMN_WIDTH = 2;
const WAVEFORM_HEIGHT = 56;

const seconds = (centiseconds: number) => (centiseconds / 100).toFixed(2);
/** Inline position of a timeline element: its start and length in seconds (the style sheet multiplies by the zoom). */
const place = (fromSeconds: number, toSeconds: number) =>
  `--start:${fromSeconds.toFixed(2)};--length:${Math.max(0, toSeconds - fromSeconds).toFixed(2)}`;

function eventSpan(event: BenchmarkEvent, channel: Channel): string {
  const overlap = event.start > event.end;
  const { from, to } = eventSpanSeconds(event);
  const title = `${event.event} channel ${channel} [${seconds(event.start)}, ${seconds(event.end)}]${overlap ? ' (overlap)' : ''}`;
  const label = event.event === 'TURN' || event.event === 'SHORTPAUSE' ? '' : event.event;
  return `<div class="event ${event.event}${overlap ? ' overlap' : ''}" data-start="${seconds(event.start)}" data-channel="${channel}" title="${escapeHtml(title)}" style="${place(from, to)}">${escapeHtml(label)}</div>`;
}

function lane(
  dataset: PageDataset,
  dialogue: ExportDialogue,
  channel: Channel,
  envelope: WaveformEnvelope,
  width: number,
): string {
  const role = dataset.roles[channel];
  const path = waveformPath(envelope, COLUMN_WIDTH, WAVEFORM_HEIGHT);
  const events = dialogue.events[channel].map((event) => eventSpan(event, channel)).join('');
  const words = dialogue.words
    .filter((word) => word.channel === channel)
    .map(
      (word) =>
        `<span class="word" data-start="${seconds(word.start)}" title="${escapeHtml(`${word.word} [${seconds(word.start)}, ${seconds(word.end)}]`)}" style="${place(word.start / 100, word.end / 100)}">${escapeHtml(word.word)}</span>`,
    )
    .join('');
  return `<div class="lane" data-channel="${channel}">
<span class="lane-label">${role} (channel ${channel}) — ${escapeHtml(dialogue.speakers[channel])}</span>
<div class="event-rows">${events}</div>
<svg class="waveform" viewBox="0 0 ${width} ${WAVEFORM_HEIGHT}" preserveAspectRatio="none" role="img" aria-label="waveform of channel ${channel}"><line x1="0" x2="${width}" y1="${WAVEFORM_HEIGHT / 2}" y2="${WAVEFORM_HEIGHT / 2}" stroke="#c0c7d1" vector-effect="non-scaling-stroke"/><path d="${path}"/></svg>
<div class="words">${words}</div>
</div>`;
}

function ruler(durationCs: number): string {
  const marks: string[] = [];
  for (let second = 0; second * 100 <= durationCs; second += 1) {
    marks.push(
      `<span class="${second % 5 === 0 ? 'major' : 'minor'}" style="${place(second, second)}">${second % 5 === 0 ? `${second} s` : ''}</span>`,
    );
  }
  return `<div class="ruler">${marks.join('')}</div>`;
}

/** The player's controls: mute and solo per channel (in lane order), loop, zoom, follow. */
function controls(dataset: PageDataset, order: readonly Channel[]): string {
  const channel = (number: Channel) =>
    `<span class="channel-control" data-channel="${number}">${escapeHtml(dataset.roles[number])} (ch ${number}) <button type="button" class="mute" data-channel="${number}" aria-pressed="false">mute</button><button type="button" class="solo" data-channel="${number}" aria-pressed="false">solo</button><meter class="level" data-channel="${number}" min="0" max="1" value="0" title="level of channel ${number} as heard"></meter></span>`;
  return `<span class="channels">${order.map(channel).join('')}</span>
<label title="a played event starts again at its end"><input type="checkbox" id="loop"> loop event</label>
<span class="zoom">zoom <button type="button" id="zoom-out" title="zoom out">−</button><button type="button" id="zoom-in" title="zoom in">+</button> <span id="zoom-level">${PIXELS_PER_SECOND} px/s</span></span>
<button type="button" id="follow" aria-pressed="true" title="keep the playhead in view; scrolling the timeline turns it off">follow playhead</button>`;
}

/** What the page links to, relative to the page. */
export interface DialoguePageLinks {
  /** The report's assets folder. */
  assets: string;
  /** The dataset's WAV of this dialogue. */
  audio: string;
  /** The report's index page. */
  index: string;
  /** The dataset's event list page, when written. */
  events?: string;
}

/** Width of a dialogue page's timeline at zoom 1, pixels ({@link PIXELS_PER_SECOND} per second of the dialogue). */
function pageWidth(dialogue: Pick<ExportDialogue, 'durationSeconds'>): number {
  return Math.ceil((Math.round(dialogue.durationSeconds * 100) / 100) * PIXELS_PER_SECOND);
}

/** Columns of each waveform on a dialogue's page (one per {@link COLUMN_WIDTH} pixels, at least 1): what {@link dialoguePageHtml}'s envelopes hold. */
export function waveformColumns(dialogue: Pick<ExportDialogue, 'durationSeconds'>): number {
  return Math.max(1, Math.ceil(pageWidth(dialogue) / COLUMN_WIDTH));
}

/**
 * The HTML of one dialogue page.
 * @param envelopes the waveform envelope of each WAV channel (index = channel) in {@link waveformColumns} columns
 *   (pipeline/report/waveform.ts readWavEnvelopes)
 * @param splitName the split the page names (default: the dialogue's, as the benchmark names it)
 * @throws RangeError when an envelope has another number of columns
 */
export function dialoguePageHtml(
  dataset: PageDataset,
  dialogue: ExportDialogue,
  envelopes: readonly WaveformEnvelope[],
  links: DialoguePageLinks,
  splitName: string = benchmarkSplitName(dialogue.split),
): string {
  const width = pageWidth(dialogue);
  const columns = waveformColumns(dialogue);
  for (const envelope of envelopes)
    if (envelope.maximum.length !== columns)
      throw new RangeError(
        `${dialogue.id}: a waveform envelope of ${envelope.maximum.length} columns, the page draws ${columns}`,
      );
  const durationCs = Math.round(dialogue.durationSeconds * 100);
  const order: Channel[] = channelOrder(dataset);
  const lanes = order.map((channel) => lane(dataset, dialogue, channel, envelopes[channel]!, width)).join('\n');
  const verdicts = loaderVerdicts(dialogue.events, datasetLoaderSettings(dataset));
  const rows = ([0, 1] as Channel[])
    .flatMap((channel) => dialogue.events[channel].map((event, index) => ({ channel, event, index })))
    .sort((a, b) => a.event.start - b.event.start || a.channel - b.channel)
    .map(({ channel, event, index }): Cell[] => {
      const verdict = formatVerdicts(verdicts.get(verdictKey(channel, index)));
      const { from, to } = eventSpanSeconds(event);
      return [
        `${event.event}${event.start > event.end ? ' (overlapping)' : ''}`,
        `${channel} (${dataset.roles[channel]})`,
        { html: `<span data-start="${seconds(event.start)}">${seconds(event.start)}</span>` },
        seconds(event.end),
        {
          html: `<span class="verdict ${verdict.kept.replace(' ', '-')}" title="${escapeHtml(verdict.title)}">${escapeHtml(verdict.text)}</span>`,
        },
        { html: playButton(from, to, event.event) },
      ];
    });
  const legend = ['TURN', 'BC', 'SHORTPAUSE', 'TURN_SHIFT', 'TURN_HOLD', 'BARGE_IN']
    .map((type) => `<span style="background:var(--${type.toLowerCase().replace('_', '-')})">${type}</span>`)
    .join('');
  const body = `<p><a href="${escapeHtml(links.index)}">← report</a>${links.events ? ` · <a href="${escapeHtml(links.events)}">every event of ${escapeHtml(dataset.dataset)}</a>` : ''}</p>
<h1>${escapeHtml(dialogue.id)}</h1>
<p class="note">${escapeHtml(dataset.dataset)} (${dataset.language}) · ${dialogue.durationSeconds.toFixed(2)} s · split: ${splitName} · channel 0 = ${dataset.roles[0]}, channel 1 = ${dataset.roles[1]}${dataset.sampleRate === null ? '' : ` · audio ${dataset.sampleRate} Hz`}${fullBandNote(dataset, dialogue)}</p>
<div class="listening" id="listening">
<div class="player"><audio id="dialogue-audio" controls preload="auto" src="${escapeHtml(links.audio)}"></audio><span id="clock">0.00 s</span>
${controls(dataset, order)}</div>
<div class="scroller" id="scroller">
<div class="timeline" id="timeline" data-duration="${(durationCs / 100).toFixed(2)}" style="--duration:${(durationCs / 100).toFixed(2)};--pixels-per-second:${PIXELS_PER_SECOND}" title="click to play from here">
${ruler(durationCs)}
${lanes}
<div id="playhead"></div>
</div>
</div>
</div>
<p class="legend">${legend} <span style="background:#666">hatched = overlapping TURN_SHIFT</span> <span class="note">click the timeline, an event, a word or a time to play from there; ▶ plays one event and stops at its end</span></p>
<h2>Events</h2>
<p class="note">Benchmark loader: what M3-DuplexBench's loader does with the event, called as <code>scripts/pipe.sh</code> calls it for this dataset, without and with context (pipeline/events/evaluable-events.ts); hover for the reason.</p>
${htmlTable(['event', 'channel', 'start (s)', 'end (s)', 'benchmark loader', 'play'], rows, 'events-table')}
<h2>Utterances</h2>
${htmlTable(
  ['start (s)', 'end (s)', 'channel', 'kind', 'text'],
  dialogue.utterances.map((utterance) => [
    { html: `<span data-start="${seconds(utterance.start)}">${seconds(utterance.start)}</span>` },
    seconds(utterance.end),
    `${utterance.channel} (${utterance.role})`,
    utterance.kind,
    utterance.cutOff
      ? {
          html: `${escapeHtml(utterance.text)} <span class="cut-off" title="the audio stops here: a barge-in cut the answer">[cut off at ${seconds(utterance.end)} s by a barge-in; planned: “${escapeHtml(utterance.cutOff.plannedText)}”; unspoken: ${utterance.cutOff.unspokenWords.length} words]</span>`,
        }
      : utterance.text,
  ]),
  'events-table',
)}`;
  return htmlPage(`${dialogue.id} — duplexsynth report`, links.assets, body, 'dialogue.js', dataset.language);
}

/**
 * The page note's words on the dialogue's full-band master (`audio_fullband/{id}.wav`, at the TTS
 * engine's own rate, beside the benchmark's WAV): empty when the dataset has none.
 */
function fullBandNote(dataset: PageDataset, dialogue: ExportDialogue): string {
  if (dataset.fullBand === null || dialogue.fullBandAudioFile === null) return '';
  return ` · full-band master ${escapeHtml(dataset.fullBand.directory)}/${escapeHtml(dialogue.id)}.wav at ${dataset.fullBand.sampleRates.join(' or ')} Hz (training exports use it)`;
}

/**
 * A "play this event" button: plays [from, to] seconds and stops there (or loops); `audio` is the WAV
 * to play when it is not the page's own (the dataset-wide event list).
 */
export function playButton(from: number, to: number, label: string, audio?: string): string {
  return `<button type="button" class="play-event" data-play-start="${from.toFixed(2)}" data-play-end="${to.toFixed(2)}"${audio ? ` data-audio="${escapeHtml(audio)}"` : ''} title="play this ${escapeHtml(label)} (${from.toFixed(2)}–${to.toFixed(2)} s) and stop at its end">▶</button>`;
}

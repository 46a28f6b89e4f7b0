/**
 * One dialogue's page of the report: the audio player, a two-lane timeline (user lane, system lane)
 * with each channel's waveform, its benchmark events as coloured spans (row 1 TURN/BC, row 2
 * SHORTPAUSE, row 3 TURN_SHIFT/TURN_HOLD/BARGE_IN), its words under the lane, and a table of the
 * events. Every span, word and table time carries `data-start` (seconds): assets/dialogue.js moves
 * playback there on a click. The page is static HTML; the audio is the dataset's own WAV, referenced
 * by a relative path, so the page works from `file://` and offline.
 */
import type { BenchmarkEvent, Channel } from '../model/types.ts';
import { channelOrder, type ExportDataset, type ExportDialogue } from '../export/export-dataset.ts';
import { escapeHtml, htmlPage, htmlTable } from './html.ts';
import { waveformEnvelope, waveformPath } from './waveform.ts';

/** Horizontal scale of the timeline, pixels per second. */
export const PIXELS_PER_SECOND = 120;
/** Width of one waveform column, pixels. */
const COLUMN_WIDTH = 2;
const WAVEFORM_HEIGHT = 56;

const seconds = (centiseconds: number) => (centiseconds / 100).toFixed(2);
const left = (centiseconds: number) => Math.round((centiseconds / 100) * PIXELS_PER_SECOND * 10) / 10;

function eventSpan(event: BenchmarkEvent, channel: Channel): string {
  const overlap = event.start > event.end;
  const from = Math.min(event.start, event.end);
  const to = Math.max(event.start, event.end);
  const title = `${event.event} channel ${channel} [${seconds(event.start)}, ${seconds(event.end)}]${overlap ? ' (overlap)' : ''}`;
  const label = event.event === 'TURN' || event.event === 'SHORTPAUSE' ? '' : event.event;
  return `<div class="event ${event.event}${overlap ? ' overlap' : ''}" data-start="${seconds(event.start)}" data-channel="${channel}" title="${escapeHtml(title)}" style="left:${left(from)}px;width:${Math.max(2, left(to) - left(from))}px">${escapeHtml(label)}</div>`;
}

function lane(dataset: ExportDataset, dialogue: ExportDialogue, channel: Channel, samples: Float32Array, width: number): string {
  const role = dataset.roles[channel];
  const columns = Math.max(1, Math.ceil(width / COLUMN_WIDTH));
  const path = waveformPath(waveformEnvelope(samples, columns), COLUMN_WIDTH, WAVEFORM_HEIGHT);
  const events = dialogue.events[channel].map((event) => eventSpan(event, channel)).join('');
  const words = dialogue.words
    .filter((word) => word.channel === channel)
    .map(
      (word) =>
        `<span class="word" data-start="${seconds(word.start)}" title="${escapeHtml(`${word.word} [${seconds(word.start)}, ${seconds(word.end)}]`)}" style="left:${left(word.start)}px;width:${Math.max(2, left(word.end) - left(word.start))}px">${escapeHtml(word.word)}</span>`,
    )
    .join('');
  return `<div class="lane" data-channel="${channel}">
<span class="lane-label">${role} (channel ${channel}) — ${escapeHtml(dialogue.speakers[channel])}</span>
<div class="event-rows">${events}</div>
<svg class="waveform" width="${width}" height="${WAVEFORM_HEIGHT}" viewBox="0 0 ${width} ${WAVEFORM_HEIGHT}" role="img" aria-label="waveform of channel ${channel}"><line x1="0" x2="${width}" y1="${WAVEFORM_HEIGHT / 2}" y2="${WAVEFORM_HEIGHT / 2}" stroke="#c0c7d1"/><path d="${path}"/></svg>
<div class="words">${words}</div>
</div>`;
}

function ruler(durationCs: number): string {
  const marks: string[] = [];
  for (let second = 0; second * 100 <= durationCs; second += 5) marks.push(`<span style="left:${left(second * 100)}px">${second} s</span>`);
  return `<div class="ruler">${marks.join('')}</div>`;
}

/** What the page links to, relative to the page. */
export interface DialoguePageLinks {
  /** The report's assets folder. */
  assets: string;
  /** The dataset's WAV of this dialogue. */
  audio: string;
  /** The report's index page. */
  index: string;
}

/**
 * The HTML of one dialogue page.
 * @param channels the decoded WAV channels (index = channel), floats in [-1, 1]
 */
export function dialoguePageHtml(dataset: ExportDataset, dialogue: ExportDialogue, channels: readonly Float32Array[], links: DialoguePageLinks): string {
  const durationCs = Math.round(dialogue.durationSeconds * 100);
  const width = Math.ceil((durationCs / 100) * PIXELS_PER_SECOND);
  const order: Channel[] = channelOrder(dataset);
  const lanes = order.map((channel) => lane(dataset, dialogue, channel, channels[channel]!, width)).join('\n');
  const rows = ([0, 1] as Channel[])
    .flatMap((channel) => dialogue.events[channel].map((event) => ({ channel, event })))
    .sort((a, b) => a.event.start - b.event.start || a.channel - b.channel)
    .map(({ channel, event }) => [
      event.event,
      `${channel} (${dataset.roles[channel]})`,
      { html: `<span data-start="${seconds(event.start)}">${seconds(event.start)}</span>` },
      seconds(event.end),
      event.start > event.end ? 'overlapping shift' : '',
    ]);
  const legend = ['TURN', 'BC', 'SHORTPAUSE', 'TURN_SHIFT', 'TURN_HOLD', 'BARGE_IN']
    .map((type) => `<span style="background:var(--${type.toLowerCase().replace('_', '-')})">${type}</span>`)
    .join('');
  const body = `<p><a href="${escapeHtml(links.index)}">← report</a></p>
<h1>${escapeHtml(dialogue.id)}</h1>
<p class="note">${escapeHtml(dataset.dataset)} (${dataset.language}) · ${dialogue.durationSeconds.toFixed(2)} s · split: ${dialogue.split ?? 'none'} · channel 0 = ${dataset.roles[0]}, channel 1 = ${dataset.roles[1]}</p>
<p class="legend">${legend} <span style="background:#666">hatched = overlapping TURN_SHIFT</span></p>
<div class="player"><audio id="dialogue-audio" controls preload="auto" src="${escapeHtml(links.audio)}"></audio><span id="clock">0.00 s</span><span class="note">click an event, a word or a time to play from there</span></div>
<div class="scroller" id="scroller">
<div class="timeline" id="timeline" data-pixels-per-second="${PIXELS_PER_SECOND}" style="width:${width}px">
${ruler(durationCs)}
${lanes}
<div id="playhead"></div>
</div>
</div>
<h2>Events</h2>
${htmlTable(['event', 'channel', 'start (s)', 'end (s)', ''], rows, 'events-table')}
<h2>Utterances</h2>
${htmlTable(
  ['start (s)', 'end (s)', 'channel', 'kind', 'text'],
  dialogue.utterances.map((utterance) => [
    { html: `<span data-start="${seconds(utterance.start)}">${seconds(utterance.start)}</span>` },
    seconds(utterance.end),
    `${utterance.channel} (${utterance.role})`,
    utterance.kind,
    utterance.text,
  ]),
  'events-table',
)}`;
  return htmlPage(`${dialogue.id} — duplexsynth report`, links.assets, body, 'dialogue.js');
}

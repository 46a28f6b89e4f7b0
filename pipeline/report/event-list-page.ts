/**
 * A dataset's event list page of the report (`report/events/{lang}/{dataset}.html`): every benchmark
 * event of every dialogue in time order per dialogue, filterable by event type and by what the
 * benchmark's loader does with it (kept as a sample under both settings, under one, under none), each
 * with a "play this event" button that plays the dialogue's WAV over the event's span and stops at its
 * end (assets/dialogue.js), and a link to the dialogue's page.
 */
import type { BenchmarkEventType, Channel } from '../model/types.ts';
import type { ExportDataset } from '../export/export-dataset.ts';
import { playButton } from './dialogue-page.ts';
import { cellHtml, escapeHtml, htmlPage } from './html.ts';
import {
  benchmarkSplitName,
  datasetLoaderSettings,
  eventSpanSeconds,
  formatVerdicts,
  loaderVerdicts,
  verdictKey,
} from './loader-verdicts.ts';

/** Event types in the order the filters list them. */
const EVENT_TYPES: readonly BenchmarkEventType[] = ['TURN', 'TURN_SHIFT', 'TURN_HOLD', 'BARGE_IN', 'BC', 'SHORTPAUSE'];

/** What the list page links to, relative to the page. */
export interface EventListLinks {
  assets: string;
  index: string;
  /** Per dialogue id: its WAV, and its page when one was written. */
  dialogues: ReadonlyMap<string, { audio: string; page: string | null }>;
}

/** The HTML of a dataset's event list page. */
export function eventListPageHtml(dataset: ExportDataset, links: EventListLinks): string {
  const settings = datasetLoaderSettings(dataset);
  const rows: string[] = [];
  const counts = new Map<BenchmarkEventType, number>();
  // the cells every row of a dialogue shares, and each distinct verdict's cell, are made once
  const verdictCells = new Map<string, { kept: string; html: string }>();
  const verdictCell = (
    verdicts: ReturnType<typeof loaderVerdicts> extends Map<string, infer V> ? V | undefined : never,
  ) => {
    const key = verdicts ? verdicts.map((verdict) => `${verdict.setting}\u0000${verdict.dropped}`).join('\u0001') : '';
    let cell = verdictCells.get(key);
    if (cell === undefined) {
      const verdict = formatVerdicts(verdicts);
      const kept = verdict.kept.replace(' ', '-');
      cell = {
        kept,
        html: `<span class="verdict ${kept}" title="${escapeHtml(verdict.title)}">${escapeHtml(verdict.text)}</span>`,
      };
      verdictCells.set(key, cell);
    }
    return cell;
  };
  const channelCells = ([0, 1] as Channel[]).map((channel) => cellHtml(`${channel} (${dataset.roles[channel]})`));
  for (const dialogue of dataset.dialogues) {
    const verdicts = loaderVerdicts(dialogue.events, settings);
    const target = links.dialogues.get(dialogue.id);
    const dialogueCell = target?.page
      ? `<a href="${escapeHtml(target.page)}">${escapeHtml(dialogue.id)}</a>`
      : escapeHtml(dialogue.id);
    const splitCell = cellHtml(benchmarkSplitName(dialogue.split));
    const events = ([0, 1] as Channel[])
      .flatMap((channel) => dialogue.events[channel].map((event, index) => ({ channel, event, index })))
      .sort((a, b) => a.event.start - b.event.start || a.channel - b.channel);
    for (const { channel, event, index } of events) {
      counts.set(event.event, (counts.get(event.event) ?? 0) + 1);
      const verdict = verdictCell(verdicts.get(verdictKey(channel, index)));
      const { from, to } = eventSpanSeconds(event);
      const cells: string[] = [
        dialogueCell,
        splitCell,
        cellHtml(`${event.event}${event.start > event.end ? ' (overlapping)' : ''}`),
        channelCells[channel]!,
        (event.start / 100).toFixed(2),
        (event.end / 100).toFixed(2),
        verdict.html,
        target ? playButton(from, to, event.event, target.audio) : '',
      ];
      rows.push(`<tr data-type="${event.event}" data-kept="${verdict.kept}"><td>${cells.join('</td><td>')}</td></tr>`);
    }
  }
  const header = ['dialogue', 'split', 'event', 'channel', 'start (s)', 'end (s)', 'benchmark loader', 'play']
    .map((name) => `<th>${name}</th>`)
    .join('');
  const table = `<table class="events-table event-list">\n<tr>${header}</tr>\n${rows.join('\n')}\n</table>`;
  const typeFilters = EVENT_TYPES.filter((type) => counts.has(type))
    .map(
      (type) =>
        `<label><input type="checkbox" name="type" value="${type}"${type === 'TURN' ? '' : ' checked'}> ${type} (${counts.get(type)})</label>`,
    )
    .join('');
  const first = dataset.dialogues.find((dialogue) => links.dialogues.has(dialogue.id));
  const body = `<p><a href="${escapeHtml(links.index)}">← report</a></p>
<h1>Events of ${escapeHtml(dataset.dataset)} (${dataset.language})</h1>
<p class="note">${dataset.dialogues.length} dialogues · benchmark loader: what M3-DuplexBench's loader does with each event, called as <code>scripts/pipe.sh</code> calls it for this dataset, without and with context (hover for the reason) · ▶ plays the event and stops at its end</p>
<div class="listening" id="listening"><div class="player"><audio id="dialogue-audio" controls preload="none"${first ? ` src="${escapeHtml(links.dialogues.get(first.id)!.audio)}"` : ''}></audio><span id="clock">0.00 s</span><label><input type="checkbox" id="loop"> loop event</label></div></div>
<form class="filters" id="event-filters">${typeFilters}
<label>benchmark loader <select name="loader"><option value="any">any</option><option value="all">kept</option><option value="some">kept with one setting</option><option value="none">dropped</option><option value="not-evaluated">not an evaluation event</option></select></label>
<span class="note"><span id="shown-count">${rows.length}</span> shown</span></form>
${table}`;
  return htmlPage(
    `events of ${dataset.dataset} — duplexsynth report`,
    links.assets,
    body,
    'dialogue.js',
    dataset.language,
  );
}

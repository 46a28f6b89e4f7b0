/**
 * The tables of a dataset's section of the report: statistics (like the paper's Table 3), quality
 * (Table 2), and the evaluable events the benchmark's loader turns into samples.
 */
import {
  DROP_REASON_DESCRIPTIONS,
  DROP_REASONS,
  EVALUATION_EVENT_TYPES,
  type EvaluableEventsReport,
} from '../events/evaluable-events.ts';
import { speechRateUnitLabel } from '../quality/speech-rate.ts';
import type { DatasetTables } from '../quality/tables.ts';
import { escapeHtml, fixed, htmlTable, type Cell } from './html.ts';

/** The quality table (DNSMOS, COMETKiwi, loudness, speech rate per split), or a note when the dataset is not scored. */
export function qualityTable(tables: DatasetTables): string {
  if (!tables.scored)
    return '<p class="note">Not scored: the build ran without quality scoring (run <code>duplexsynth score</code> on the dataset folder).</p>';
  const unit = speechRateUnitLabel(tables.language);
  const rows: Cell[][] = tables.quality.map((row) => {
    const quality = row.quality;
    if (quality === null) return [row.split, null, 'not scored', null, null, null, null, null, null, null];
    return [
      row.split,
      quality.dialogues,
      fixed(quality.dnsmos?.ovrl, 2),
      fixed(quality.dnsmos?.sig, 2),
      fixed(quality.dnsmos?.bak, 2),
      fixed(quality.dnsmos?.p808, 2),
      quality.cometKiwi === null ? (tables.cometKiwi === null ? 'n/a' : 'not computed') : fixed(quality.cometKiwi, 3),
      fixed(quality.meanChannelLoudnessLufs, 1),
      fixed(quality.speechRate, 2),
      quality.roleLabelDisagreements,
    ];
  });
  return htmlTable(
    [
      'split',
      'dialogues',
      'DNSMOS OVRL',
      'SIG',
      'BAK',
      'P808',
      'COMETKiwi',
      'loudness (LUFS)',
      `speech rate (${unit})`,
      'role/label disagreements',
    ],
    rows,
  );
}

/** The statistics table: dialogues, hours and events per split. */
export function statisticsTable(tables: DatasetTables): string {
  return htmlTable(
    ['split', 'dialogues', 'hours', 'mean s', 'TURN_SHIFT', 'TURN_HOLD', 'BC', 'BARGE_IN'],
    tables.statistics.map((row) => [
      row.split,
      row.dialogues,
      row.hours.toFixed(2),
      row.meanSeconds.toFixed(1),
      row.events.TURN_SHIFT,
      row.events.TURN_HOLD,
      row.events.BC,
      row.events.BARGE_IN,
    ]),
  );
}

/** The evaluable events per loader setting: events in the file, samples, and drops by reason. */
export function evaluableEventsSection(reports: readonly EvaluableEventsReport[], scope: string): string {
  const used = DROP_REASONS.filter((reason) =>
    reports.some((report) => EVALUATION_EVENT_TYPES.some((type) => (report.byType[type].dropped[reason] ?? 0) > 0)),
  );
  const tables = reports.map((report) => {
    const rows = EVALUATION_EVENT_TYPES.map((type) => {
      const counts = report.byType[type];
      return [type, counts.inFile, counts.samples, ...used.map((reason) => counts.dropped[reason] ?? 0)] as Cell[];
    });
    const drops = report.dialoguesWithDrops.length
      ? `<p class="note">Dropped although this setting evaluates them: ${report.dialoguesWithDrops.length} (${report.dialoguesWithDrops
          .slice(0, 10)
          .map((drop) => `${escapeHtml(drop.id)} ${drop.event} at ${(drop.start / 100).toFixed(2)} s: ${drop.reason}`)
          .join('; ')}${report.dialoguesWithDrops.length > 10 ? '; …' : ''})</p>`
      : '';
    return `<h4>${escapeHtml(report.setting)} (${report.dialogues} dialogues)</h4>\n${htmlTable(['event', 'in file', 'samples', ...used.map((reason) => `dropped: ${reason}`)], rows)}${drops}`;
  });
  const reasons = used.length
    ? `<ul class="note">${used.map((reason) => `<li>${reason}: ${escapeHtml(DROP_REASON_DESCRIPTIONS[reason])}</li>`).join('')}</ul>`
    : '';
  return `<h3>Evaluable events (${escapeHtml(scope)})</h3>
<p class="note">What the benchmark's loader (M3-DuplexBench <code>build_event_samples</code>, called as <code>scripts/pipe.sh</code> calls it) turns into samples, and why it drops the others (pipeline/events/evaluable-events.ts).</p>
${tables.join('\n')}
${reasons}`;
}

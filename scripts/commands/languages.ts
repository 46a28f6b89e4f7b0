/**
 * `duplexsynth languages`: the language packs the pipeline knows (the built-in ones of
 * pipeline/model/language-packs/ and any `--language-pack` files), each with its script, its offline
 * voice (espeak-ng or Open JTalk), its CosyVoice support and where its turn-taking timing statistics
 * come from (the shipped file measured on a corpus, or the cross-language prior).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../pipeline/storage/package-files.ts';
import type { LanguagePack } from '../../pipeline/model/language-pack.ts';

/** One language pack as `duplexsynth languages` lists it. */
export interface LanguageListing {
  code: string;
  name: string;
  /** Unicode scripts of its letters. */
  scripts: string[];
  /** How `txt_align` words are cut (`spaces`, `intl-segmenter`, `japanese-morphemes`). */
  segmentation: string;
  /** The offline speech engine and its voice (`espeak-ng` `de`, `open-jtalk` `nitech-m001`). */
  offlineVoice: { engine: string; voice: string };
  /** Whether CosyVoice2 and CosyVoice3 speak it, and what the text needs. */
  cosyVoice: { cosyvoice2: boolean; cosyvoice3: boolean; note: string };
  /**
   * The timing statistics a build uses when the config names none: the shipped file (relative to the
   * project), whether it is the cross-language prior, and the corpus it was measured on.
   */
  timing: { file: string; prior: boolean; corpus: string };
  /** The pack file (relative to the project when inside it). */
  source: string;
}

/** A path relative to the project when inside it, else as given. */
function projectPath(file: string): string {
  const relative = path.relative(PACKAGE_ROOT, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

/**
 * The listings of the built-in packs, then of `packFiles` (a file's pack replaces the built-in one of
 * its code), sorted by code.
 * @throws LanguagePackError for a pack file that cannot be read or fails the schema (a statistics
 *   file that cannot be read shows as corpus `unknown`)
 */
export async function listLanguages(packFiles: readonly string[] = []): Promise<LanguageListing[]> {
  const [
    { builtInLanguagePacks, languagePackSource, readLanguagePackFile },
    { defaultTimingStatisticsPath, TIMING_PRIOR_NAME },
  ] = await Promise.all([
    import('../../pipeline/model/language-pack.ts'),
    import('../../pipeline/timeline/timing-statistics.ts'),
  ]);
  const packs = new Map<string, LanguagePack>(builtInLanguagePacks());
  for (const file of packFiles) {
    const pack = readLanguagePackFile(path.resolve(file));
    packs.set(pack.code, pack);
  }
  const listings: LanguageListing[] = [];
  for (const pack of [...packs.values()].sort((a, b) => a.code.localeCompare(b.code))) {
    const prior = pack.timing.statistics === null;
    const file = defaultTimingStatisticsPath(pack.timing.statistics ?? TIMING_PRIOR_NAME);
    listings.push({
      code: pack.code,
      name: pack.name,
      scripts: [...pack.script.scripts],
      segmentation: pack.script.segmentation,
      offlineVoice: { engine: pack.offlineVoice.engine, voice: pack.offlineVoice.voice },
      cosyVoice: {
        cosyvoice2: pack.cosyVoice.cosyvoice2,
        cosyvoice3: pack.cosyVoice.cosyvoice3,
        note: pack.cosyVoice.note,
      },
      timing: { file: projectPath(file), prior, corpus: await measuredCorpusOf(file) },
      source: projectPath(languagePackSource(pack)),
    });
  }
  return listings;
}

/** The `provenance.corpus` of a timing statistics file, or `unknown` when it cannot be read. */
async function measuredCorpusOf(file: string): Promise<string> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as { provenance?: { corpus?: unknown } };
    return typeof value.provenance?.corpus === 'string' ? value.provenance.corpus : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The listings as text: one block per language. */
export function formatLanguages(listings: readonly LanguageListing[]): string {
  const lines: string[] = [];
  for (const language of listings) {
    const cosyVoice = [language.cosyVoice.cosyvoice2 && 'CosyVoice2', language.cosyVoice.cosyvoice3 && 'CosyVoice3']
      .filter(Boolean)
      .join(', ');
    lines.push(
      `${language.code}  ${language.name}`,
      `  script:         ${language.scripts.join(', ')} (${language.segmentation})`,
      `  offline voice:  ${language.offlineVoice.engine} ${language.offlineVoice.voice}`,
      `  CosyVoice:      ${cosyVoice || 'none'}${language.cosyVoice.note ? ` (${language.cosyVoice.note})` : ''}`,
      `  timing:         ${language.timing.prior ? 'cross-language prior, ' : ''}${language.timing.file}: ${language.timing.corpus}`,
      `  pack:           ${language.source}`,
      '',
    );
  }
  return `${lines.join('\n')}`;
}

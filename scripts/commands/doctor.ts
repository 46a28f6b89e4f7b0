/**
 * `duplexsynth doctor`: what this machine's set-up has for a build: the Debian tools (ffmpeg, sox,
 * espeak-ng and the voice of every language pack that speaks with it, Open JTalk with its dictionary
 * and voice, redis-server, chromium), the DNSMOS model files (found as quality scoring finds them,
 * without downloading), and with a build config each configured service (./doctor-services.ts).
 * Every missing thing comes with its fix.
 */
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { checkConfiguredServices } from './doctor-services.ts';
import type { DoctorCheck } from './doctor-check.ts';

export type { DoctorCheck } from './doctor-check.ts';

/** What `doctor` runs with. */
export interface DoctorOptions {
  /** A build config file: its services are checked too. */
  config?: string;
  /** Environment to read PATH and DUPLEXSYNTH_DNSMOS_DIR from (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
  /** How long a service may take to answer, milliseconds (default 3000). */
  timeoutMilliseconds?: number;
}

/** The fix of a missing Debian package: the project's set-up script installs it. */
const SETUP_FIX = 'npm run setup (bash scripts/setup-system.sh installs the Debian packages)';

/** The Debian tools a build or its tests run, with what each is for. */
const TOOLS: readonly { name: string; use: string }[] = [
  { name: 'ffmpeg', use: 'audio conversion and EBU R 128 loudness' },
  { name: 'sox', use: 'audio conversion' },
  { name: 'espeak-ng', use: 'offline speech of every espeak-ng language pack' },
  { name: 'open_jtalk', use: 'offline Japanese speech' },
  { name: 'redis-server', use: 'queued builds (build --queue) and their tests' },
  { name: 'chromium', use: "the HTML report's browser test" },
];

/** The absolute path of an executable named `name` on `PATH`, or undefined. */
export async function findOnPath(name: string, searchPath: string | undefined): Promise<string | undefined> {
  for (const directory of (searchPath ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** Whether a file can be read. */
async function readable(file: string): Promise<boolean> {
  return access(file, constants.R_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Runs every check: the tools, the offline voices, the DNSMOS models, then (with `config`) the
 * configured services, in this order.
 * @throws ConfigError (via the config reader) when `config` cannot be read or is invalid
 */
export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const environment = options.environment ?? process.env;
  const checks: DoctorCheck[] = [];
  const found = new Map<string, string | undefined>();
  for (const tool of TOOLS) {
    const file = await findOnPath(tool.name, environment.PATH);
    found.set(tool.name, file);
    checks.push(
      file
        ? { name: tool.name, group: 'tool', ok: true, detail: `${file} (${tool.use})` }
        : { name: tool.name, group: 'tool', ok: false, detail: `not on PATH (${tool.use})`, fix: SETUP_FIX },
    );
  }
  checks.push(...(await checkOfflineVoices(found.get('espeak-ng'), found.get('open_jtalk'))));
  checks.push(await checkDnsmosModels(environment));
  if (options.config)
    checks.push(...(await checkConfiguredServices(options.config, options.timeoutMilliseconds ?? 3000)));
  return checks;
}

/**
 * The offline voice of every built-in language pack: its espeak-ng voice among `espeak-ng --voices`,
 * or Open JTalk's dictionary and HTS voice file (pipeline/services/tts/open-jtalk.ts defaults).
 */
async function checkOfflineVoices(espeakNg: string | undefined, openJtalk: string | undefined): Promise<DoctorCheck[]> {
  const [{ builtInLanguagePacks }, { espeakNgVoiceNames }, { DEFAULT_OPEN_JTALK_OPTIONS }] = await Promise.all([
    import('../../pipeline/model/language-pack.ts'),
    import('../../pipeline/services/tts/espeak-ng.ts'),
    import('../../pipeline/services/tts/open-jtalk.ts'),
  ]);
  const checks: DoctorCheck[] = [];
  let voices: Set<string> | undefined;
  if (espeakNg) voices = await espeakNgVoiceNames(espeakNg).catch(() => undefined);
  for (const pack of builtInLanguagePacks().values()) {
    const { engine, voice } = pack.offlineVoice;
    const name = `${engine} voice ${voice} (${pack.code})`;
    if (engine === 'espeak-ng') {
      if (!espeakNg)
        checks.push({ name, group: 'voice', ok: false, detail: 'espeak-ng is not installed', fix: SETUP_FIX });
      else if (voices?.has(voice.toLowerCase()))
        checks.push({ name, group: 'voice', ok: true, detail: 'in espeak-ng --voices' });
      else
        checks.push({
          name,
          group: 'voice',
          ok: false,
          detail: voices ? 'not in espeak-ng --voices' : 'espeak-ng --voices did not run',
          fix: `a build of ${pack.code} with espeak-ng stops at once without it: install an espeak-ng whose --voices lists ${voice}, or name the voices in the build config (tts.${pack.code}.voices)`,
        });
      continue;
    }
    const files = [
      ['dictionary', path.join(DEFAULT_OPEN_JTALK_OPTIONS.dictionaryDirectory, 'sys.dic')],
      ['voice', DEFAULT_OPEN_JTALK_OPTIONS.voicePath],
    ] as const;
    const missing: string[] = [];
    for (const [what, file] of files) if (!(await readable(file))) missing.push(`${what} ${file}`);
    if (!openJtalk) missing.unshift('open_jtalk');
    checks.push(
      missing.length === 0
        ? { name, group: 'voice', ok: true, detail: files.map(([, file]) => file).join(', ') }
        : {
            name,
            group: 'voice',
            ok: false,
            detail: `missing: ${missing.join(', ')}`,
            fix: `${SETUP_FIX}: open-jtalk, open-jtalk-mecab-naist-jdic, hts-voice-nitech-jp-atr503-m001 (Debian contrib)`,
          },
    );
  }
  return checks;
}

/**
 * The DNSMOS model files, looked up as quality scoring looks them up (stages/score-quality.ts
 * `defaultDnsmosModelLocation`, then pipeline/services/mos/dnsmos-model-files.ts), without downloading.
 */
async function checkDnsmosModels(environment: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const [{ defaultDnsmosModelLocation }, { resolveDnsmosModelDirectory, DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE }] =
    await Promise.all([
      import('../../stages/score-quality.ts'),
      import('../../pipeline/services/mos/dnsmos-model-files.ts'),
    ]);
  const name = 'DNSMOS models';
  try {
    const location = await defaultDnsmosModelLocation(environment);
    const directory = await resolveDnsmosModelDirectory({ ...location, download: false, environment });
    return { name, group: 'model', ok: true, detail: directory };
  } catch (error) {
    return {
      name,
      group: 'model',
      ok: false,
      detail: (error as Error).message.split('\n')[0]!,
      fix: `set ${DNSMOS_DIRECTORY_ENVIRONMENT_VARIABLE} to a folder holding sig_bak_ovr.onnx and model_v8.onnx (or DUPLEXSYNTH_SHARED to a shared folder with models/dnsmos), or let the first scoring download them (network access to github.com)`,
    };
  }
}

/** The checks as text: one line each (`ok`/`MISSING`, name, detail), the fix below a missing one, then a count. */
export function formatDoctor(checks: readonly DoctorCheck[]): string {
  const lines: string[] = [];
  for (const check of checks) {
    lines.push(`${check.ok ? 'ok     ' : 'MISSING'} ${check.name}: ${check.detail}`);
    if (!check.ok && check.fix) lines.push(`        fix: ${check.fix}`);
  }
  const missing = checks.filter((check) => !check.ok).length;
  lines.push(missing === 0 ? `all ${checks.length} present` : `${missing} of ${checks.length} missing`);
  return `${lines.join('\n')}\n`;
}

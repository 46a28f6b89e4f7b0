/**
 * Build configuration files: where the project and its shared material are, reading a YAML file (with
 * a size limit checked before it is read) into a resolved `BuildConfig`, and the built-in default
 * configuration file.
 */
import { InputFileError, readInputText } from './storage/read-input-file.ts';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { describeFileSystemError } from './storage/file-system-errors.ts';
import { PACKAGE_ROOT } from './storage/package-files.ts';
import { yamlErrorLine } from './storage/yaml-error.ts';
import { ConfigError, resolveConfig, type BuildConfig } from './config-resolve.ts';

/** Project root (the folder holding package.json), the same from the sources and from dist/ (storage/package-files.ts). */
export const PROJECT_ROOT = PACKAGE_ROOT;

/**
 * Folder of the shared read-only material: `DUPLEXSYNTH_SHARED` (absolute, or relative to the project
 * root) when set, else `../shared` beside the project.
 */
export function sharedDirectory(): string {
  return path.resolve(PROJECT_ROOT, process.env.DUPLEXSYNTH_SHARED ?? '../shared');
}

/**
 * Read and resolve a YAML build configuration.
 * @throws ConfigError when the file is missing, not YAML, or invalid (message names the file and YAML path)
 */
export async function loadConfigFile(file: string): Promise<BuildConfig> {
  let text: string;
  const limit = maximumConfigFileBytes();
  try {
    text = await readInputText(file, { maximumBytes: limit });
  } catch (error) {
    if (error instanceof InputFileError && error.kind === 'too-large') {
      throw new ConfigError(
        `${file}: ${error.size} bytes, more than the ${limit} allowed for a configuration file (${MAXIMUM_CONFIG_BYTES_VARIABLE}); a build config is a few kB`,
      );
    }
    throw new ConfigError(describeFileSystemError(error, file, 'configuration file'));
  }
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    throw new ConfigError(`${file}: not valid YAML: ${yamlErrorLine(document.errors[0]!)}`);
  }
  let value: unknown;
  try {
    value = document.toJS(); // yaml's default alias limit (maxAliasCount 100) refuses an alias bomb here
  } catch (error) {
    throw new ConfigError(
      `${file}: not usable YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
  }
  return resolveConfig(value, file, path.dirname(path.resolve(file)));
}

/** The environment variable that overrides {@link DEFAULT_MAXIMUM_CONFIG_BYTES}. */
export const MAXIMUM_CONFIG_BYTES_VARIABLE = 'DUPLEXSYNTH_MAXIMUM_CONFIG_BYTES';
/** Largest configuration file read, bytes (a real build config is 1–3 kB; the limit is checked before the file is read, so it is not a config key). */
export const DEFAULT_MAXIMUM_CONFIG_BYTES = 1_000_000;

/** {@link DEFAULT_MAXIMUM_CONFIG_BYTES}, or the positive integer in `DUPLEXSYNTH_MAXIMUM_CONFIG_BYTES`. @throws ConfigError when that variable is set to something else */
function maximumConfigFileBytes(): number {
  const value = process.env[MAXIMUM_CONFIG_BYTES_VARIABLE];
  if (value === undefined || value === '') return DEFAULT_MAXIMUM_CONFIG_BYTES;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0)
    throw new ConfigError(`${MAXIMUM_CONFIG_BYTES_VARIABLE}: "${value}" is not a positive whole number of bytes`);
  return parsed;
}

/**
 * Whether a YAML build configuration sets `output.cacheDirectory` itself (else a command-line `--out`
 * puts the cache beside the output folder).
 * @throws ConfigError as {@link loadConfigFile} when the file cannot be read or is not YAML
 */
export async function configFileSetsCacheDirectory(file: string): Promise<boolean> {
  let text: string;
  try {
    text = await readInputText(file, { maximumBytes: maximumConfigFileBytes() });
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`${file}: cannot read configuration: ${(error as Error).message}`);
  }
  const document = parseDocument(text);
  if (document.errors.length > 0)
    throw new ConfigError(`${file}: not valid YAML: ${yamlErrorLine(document.errors[0]!)}`);
  return document.hasIn(['output', 'cacheDirectory']);
}

/** Path of the built-in offline default configuration (the demo corpus, both languages). */
export const DEFAULT_CONFIG_FILE = path.join(PROJECT_ROOT, 'pipeline', 'default-config.yaml');

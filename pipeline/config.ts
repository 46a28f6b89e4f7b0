/**
 * Build configuration: one YAML file per build, validated with zod, defaults resolved once into a
 * complete `BuildConfig` (every field present). Errors name the YAML path of the offending value.
 * The parts live in their own modules; this one exports them all:
 * - config-schema.ts and its sections (config-schema-dataset.ts, config-schema-timeline.ts,
 *   config-schema-speech.ts, config-schema-quality.ts): what a file may say, each key's meaning and default;
 * - config-resolve.ts: validation, the defaults that depend on the language packs, absolute paths;
 * - config-file.ts: reading a file, the project root and the built-in default configuration.
 *
 * `npx duplexsynth schema` writes the JSON Schema (from `z.toJSONSchema`) for editor completion.
 */
import { z } from 'zod';
import { buildConfigInputSchema } from './config-schema.ts';

export { buildConfigInputSchema, type BuildConfigInput } from './config-schema.ts';
export {
  RESERVED_FOLDER_SUFFIXES,
  SAFE_FOLDER_NAME,
  reservedSuffixMessage,
  reservedSuffixOf,
} from './config-schema-dataset.ts';
export {
  ConfigError,
  configSourceOf,
  datasetNameOf,
  defaultDatasetName,
  keepConfigSource,
  resolveConfig,
  ttsOf,
  withLanguageDefaults,
  type BuildConfig,
} from './config-resolve.ts';
export {
  configFileSetsCacheDirectory,
  DEFAULT_CONFIG_FILE,
  DEFAULT_MAXIMUM_CONFIG_BYTES,
  loadConfigFile,
  MAXIMUM_CONFIG_BYTES_VARIABLE,
  PROJECT_ROOT,
  sharedDirectory,
} from './config-file.ts';

/** JSON Schema of the configuration file, for editors (`yaml-language-server: $schema=...`). */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(buildConfigInputSchema, { io: 'input' });
}

/**
 * Prompt templates are versioned files in this folder, `<name>.v<version>.md`:
 *
 * ```
 * ---
 * name: rewrite-spoken
 * version: 1
 * description: …
 * ---
 * <!-- system -->
 * system instruction text, may use {{placeholders}}
 * <!-- prompt -->
 * user prompt text with {{placeholders}}
 * ```
 *
 * A changed meaning gets a new file (`.v2.md`); the template's sha256 goes into cache fingerprints, so
 * even an in-place edit cannot reuse stale outputs (but it does invalidate recorded responses: rerun
 * `scripts/record-demo-responses.ts`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { describeIssues } from '../model/validation.ts';
import { packageFile } from '../storage/package-files.ts';

/** A parsed prompt template. */
export interface PromptTemplate {
  /** `<name>.v<version>`, e.g. `rewrite-spoken.v1`. */
  id: string;
  name: string;
  version: number;
  description: string;
  system: string;
  prompt: string;
  /** Placeholder names used in `system` and `prompt`, sorted. */
  placeholders: string[];
  /** sha256 (hex) of the file's text. */
  sha256: string;
}

/** A filled template: the texts to send. */
export interface FilledPrompt {
  system: string;
  prompt: string;
}

/** Folder of the template files (this folder). */
export const PROMPT_DIRECTORY = packageFile('pipeline', 'prompts');

const frontMatterSchema = z.object({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/),
  version: z.number().int().positive(),
  description: z.string().default(''),
});

const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9]*)\s*\}\}/g;
const SYSTEM_MARKER = '<!-- system -->';
const PROMPT_MARKER = '<!-- prompt -->';

/**
 * Parses a template file's text.
 *
 * @param id the expected id (`<name>.v<version>`), checked against the front matter.
 * @param text the file's text.
 * @returns the template.
 * @throws Error when the front matter is missing or malformed, does not match `id`, or the
 *   `<!-- system -->` / `<!-- prompt -->` markers are missing or out of order.
 */
export function parsePromptTemplate(id: string, text: string): PromptTemplate {
  const normalised = text.replace(/\r\n/g, '\n');
  const frontMatter = /^---\n([\s\S]*?)\n---\n/.exec(normalised);
  if (frontMatter === null) throw new Error(`prompt template ${id}: missing YAML front matter (--- … ---)`);
  const header = frontMatterSchema.safeParse(parseYaml(frontMatter[1] ?? ''));
  if (!header.success) {
    throw new Error(`prompt template ${id}: bad front matter: ${describeIssues(header.error.issues)}`);
  }
  const declaredId = `${header.data.name}.v${header.data.version}`;
  if (declaredId !== id) throw new Error(`prompt template ${id}: front matter declares ${declaredId}`);

  const body = normalised.slice(frontMatter[0].length);
  const systemAt = body.indexOf(SYSTEM_MARKER);
  const promptAt = body.indexOf(PROMPT_MARKER);
  if (systemAt < 0 || promptAt < 0 || promptAt < systemAt) {
    throw new Error(
      `prompt template ${id}: needs a "${SYSTEM_MARKER}" section followed by a "${PROMPT_MARKER}" section`,
    );
  }
  const system = body.slice(systemAt + SYSTEM_MARKER.length, promptAt).trim();
  const prompt = body.slice(promptAt + PROMPT_MARKER.length).trim();
  const placeholders = [
    ...new Set([...`${system}\n${prompt}`.matchAll(PLACEHOLDER)].map((match) => match[1] ?? '')),
  ].sort();
  return {
    id,
    name: header.data.name,
    version: header.data.version,
    description: header.data.description,
    system,
    prompt,
    placeholders,
    sha256: createHash('sha256').update(text).digest('hex'),
  };
}

const loaded = new Map<string, PromptTemplate>();

/**
 * Loads `<directory>/<id>.md` (cached per path).
 *
 * @param id e.g. `rewrite-spoken.v1`.
 * @param directory folder of the templates; defaults to {@link PROMPT_DIRECTORY}.
 * @returns the parsed template.
 * @throws Error when the file cannot be read or does not parse (see {@link parsePromptTemplate}).
 */
export function loadPromptTemplate(id: string, directory: string = PROMPT_DIRECTORY): PromptTemplate {
  const file = join(directory, `${id}.md`);
  const cached = loaded.get(file);
  if (cached !== undefined) return cached;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`prompt template ${id}: cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  const template = parsePromptTemplate(id, text);
  loaded.set(file, template);
  return template;
}

/**
 * Fills every `{{placeholder}}` in one pass (values are inserted literally, never re-expanded).
 *
 * @param template the template.
 * @param values a value for each placeholder.
 * @returns the system and prompt texts.
 * @throws Error when a placeholder has no value, or a value names no placeholder (a typo).
 */
export function fillPromptTemplate(template: PromptTemplate, values: Readonly<Record<string, string>>): FilledPrompt {
  const missing = template.placeholders.filter((name) => !Object.hasOwn(values, name));
  if (missing.length > 0)
    throw new Error(`prompt template ${template.id}: no value for ${missing.map((name) => `{{${name}}}`).join(', ')}`);
  const unused = Object.keys(values).filter((name) => !template.placeholders.includes(name));
  if (unused.length > 0)
    throw new Error(
      `prompt template ${template.id}: has no placeholder ${unused.map((name) => `{{${name}}}`).join(', ')}`,
    );
  const fill = (text: string): string => text.replace(PLACEHOLDER, (_match, name: string) => values[name] ?? '');
  return { system: fill(template.system), prompt: fill(template.prompt) };
}

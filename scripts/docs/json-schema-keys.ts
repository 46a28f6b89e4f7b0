/**
 * The keys of a JSON Schema as dotted paths (`audio.sampleRate`, `tts.<language>.service.urls`), each
 * with its `description` and `default`: a walk of the JSON Schema file itself, independent of the zod
 * walk that renders docs/configuration.md, so that the docs test checks the page against another source.
 */

/** One key of a JSON Schema. */
export interface JsonSchemaKey {
  /** Dotted path; a record's keys are written `<language>` (language-code keys) or `<name>`. */
  path: string;
  description: string | undefined;
  /** Whether the key's schema gives a `default`. */
  hasDefault: boolean;
  default: unknown;
}

type Schema = Record<string, unknown>;

/** Every key (object property, record entry, array item of objects) of `schema`, in document order. */
export function jsonSchemaKeys(schema: Schema): JsonSchemaKey[] {
  const keys: JsonSchemaKey[] = [];
  const visit = (node: Schema, prefix: string): void => {
    for (const variant of [...asList(node.anyOf), ...asList(node.oneOf), ...asList(node.allOf)]) visit(variant, prefix);
    if (node.items && typeof node.items === 'object' && !Array.isArray(node.items)) visit(node.items as Schema, prefix);
    const properties = (node.properties ?? {}) as Record<string, Schema>;
    for (const [name, child] of Object.entries(properties)) add(`${prefix}${name}`, child);
    const additional = node.additionalProperties;
    if (additional && typeof additional === 'object' && Object.keys(additional).length > 0) {
      const keyName = isLanguageKeyed(node) ? '<language>' : '<name>';
      add(`${prefix}${keyName}`, additional as Schema);
    }
  };
  const add = (path: string, child: Schema): void => {
    keys.push({
      path,
      description: typeof child.description === 'string' ? child.description : undefined,
      hasDefault: 'default' in child,
      default: child.default,
    });
    visit(child, `${path}.`);
  };
  visit(schema, '');
  return keys;
}

function asList(value: unknown): Schema[] {
  return Array.isArray(value) ? (value as Schema[]) : [];
}

/** A record whose keys must be language codes (its `propertyNames` carries the BCP-47 pattern), or an object whose extra keys are language codes. */
function isLanguageKeyed(node: Schema): boolean {
  const names = node.propertyNames as Schema | undefined;
  if (names && typeof names.pattern === 'string') return names.pattern.startsWith('^[a-z]{2,3}');
  return node.properties !== undefined;
}

/**
 * The keys of a zod object schema as rows of a reference table: dotted path, type with its allowed
 * values, default, one-line meaning (the key's `.describe()`) and an example value. Union variants
 * discriminated by a literal key (`backend`) are listed one after another, each row naming its variant.
 * A record's keys are written `<language>` when they must be language codes, else `<name>`.
 */
import { z } from 'zod';

/** One key of a schema. */
export interface SchemaKeyRow {
  /** Dotted path, e.g. `audio.sampleRate`, `tts.<language>.service.urls`. */
  path: string;
  /** The variant the key belongs to (`llm.rewrite with backend: gemini`), or '' outside discriminated unions. */
  variant: string;
  /** Type and allowed values, e.g. `integer, 8000 to 48000`, `one of: keep, drop-turn`. */
  type: string;
  /** Whether the key has a default (`.default()` or `.prefault()`). */
  hasDefault: boolean;
  default: unknown;
  /** Whether the key may be left out without a default (optional). */
  optional: boolean;
  description: string;
  /** An example value: the `examples` metadata, the default or the first allowed value (undefined: none). */
  example: unknown;
  /** Whether the key holds further keys (an object, a record or a union of objects). */
  hasChildren: boolean;
}

type AnySchema = z.ZodType;
type Definition = Record<string, unknown> & { type: string };

function definitionOf(schema: AnySchema): Definition {
  return (schema as unknown as { _zod: { def: Definition } })._zod.def;
}

/** The definitions of a schema's checks (`regex`, `min`, `int`, …), and of its own format (`z.url()`). */
function checksOf(schema: AnySchema): Record<string, unknown>[] {
  const definition = definitionOf(schema);
  const checks = ((definition.checks ?? []) as { _zod: { def: Record<string, unknown> } }[]).map(
    (check) => check._zod.def,
  );
  return typeof definition.format === 'string'
    ? [{ check: 'string_format', format: definition.format }, ...checks]
    : checks;
}

function metaOf(schema: AnySchema): { description?: string; examples?: unknown[] } {
  return (z.globalRegistry.get(schema) ?? {}) as { description?: string; examples?: unknown[] };
}

interface Unwrapped {
  core: AnySchema;
  description: string | undefined;
  examples: unknown[] | undefined;
  hasDefault: boolean;
  default: unknown;
  optional: boolean;
  nullable: boolean;
}

/** The schema below its optional/nullable/default wrappers, with what the wrappers say (outermost first). */
function unwrap(schema: AnySchema): Unwrapped {
  const result: Unwrapped = {
    core: schema,
    description: undefined,
    examples: undefined,
    hasDefault: false,
    default: undefined,
    optional: false,
    nullable: false,
  };
  let current = schema;
  for (;;) {
    const meta = metaOf(current);
    result.description ??= meta.description;
    result.examples ??= meta.examples;
    const definition = definitionOf(current);
    if (definition.type === 'default' || definition.type === 'prefault') {
      if (!result.hasDefault) {
        result.hasDefault = true;
        result.default = definition.defaultValue;
      }
    } else if (definition.type === 'optional') {
      result.optional = true;
    } else if (definition.type === 'nullable') {
      result.nullable = true;
    } else if (definition.type !== 'pipe') {
      break;
    }
    current = (definition.type === 'pipe' ? definition.in : definition.innerType) as AnySchema;
  }
  result.core = current;
  return result;
}

/** A record keyed by language codes (its key schema carries the BCP-47 pattern). */
function isLanguageKey(schema: AnySchema | undefined): boolean {
  if (!schema) return false;
  return checksOf(schema).some(
    (check) => check.pattern instanceof RegExp && check.pattern.source.startsWith('^[a-z]{2,3}'),
  );
}

/** Human-readable type of a schema, with its allowed values and bounds. */
export function describeType(schema: AnySchema): string {
  const { core, nullable } = unwrap(schema);
  const text = coreType(core);
  return nullable ? `${text}, or null` : text;
}

function coreType(schema: AnySchema): string {
  const definition = definitionOf(schema);
  const checks = checksOf(schema);
  switch (definition.type) {
    case 'string': {
      const formats = checks
        .filter((check) => check.check === 'string_format' && check.format !== 'regex')
        .map((check) => String(check.format));
      const pattern = checks.some((check) => check.format === 'regex' || check.check === 'string_format');
      return formats.length > 0 ? `string (${formats.join(', ')})` : pattern ? 'string (pattern)' : 'string';
    }
    case 'number': {
      const integer = checks.some((check) => check.check === 'number_format' && String(check.format).includes('int'));
      const bounds: string[] = [];
      for (const check of checks) {
        const value = check.value as number;
        if (typeof value !== 'number' || Math.abs(value) >= Number.MAX_SAFE_INTEGER) continue;
        if (check.check === 'greater_than') bounds.push(`${check.inclusive ? '≥' : '>'} ${value}`);
        if (check.check === 'less_than') bounds.push(`${check.inclusive ? '≤' : '<'} ${value}`);
      }
      return `${integer ? 'integer' : 'number'}${bounds.length > 0 ? ` ${bounds.join(', ')}` : ''}`;
    }
    case 'boolean':
      return 'boolean';
    case 'enum':
      return `one of: ${Object.values(definition.entries as Record<string, string>).join(', ')}`;
    case 'literal':
      return `${(definition.values as unknown[]).map((value) => String(value)).join(', ')}`;
    case 'array':
      return `list of (${describeType(definition.element as AnySchema)})`;
    case 'tuple':
      return `list of ${(definition.items as AnySchema[]).length}: ${(definition.items as AnySchema[])
        .map((item) => describeType(item))
        .join(', ')}`;
    case 'record':
      return `map of ${isLanguageKey(definition.keyType as AnySchema) ? 'language code' : 'name'} to (${describeType(definition.valueType as AnySchema)})`;
    case 'object':
      return 'object';
    case 'union': {
      const options = definition.options as AnySchema[];
      if (typeof definition.discriminator === 'string') return `object, by ${definition.discriminator}`;
      return options.map((option) => describeType(option)).join(' or ');
    }
    default:
      return definition.type;
  }
}

/** An example value for a key without `examples` metadata. */
function exampleOf(unwrapped: Unwrapped): unknown {
  if (unwrapped.examples && unwrapped.examples.length > 0) return unwrapped.examples[0];
  if (unwrapped.hasDefault) return unwrapped.default;
  const definition = definitionOf(unwrapped.core);
  if (definition.type === 'enum') return Object.values(definition.entries as Record<string, string>)[0];
  if (definition.type === 'literal') return (definition.values as unknown[])[0];
  if (definition.type === 'boolean') return true;
  return undefined;
}

/**
 * The object schemas a core schema holds keys of: the object itself, each variant of a union of objects,
 * or the objects among the options of any other union.
 */
function objectVariants(schema: AnySchema, owner: string): { variant: string; object: AnySchema }[] {
  const definition = definitionOf(schema);
  if (definition.type === 'object') return [{ variant: '', object: schema }];
  if (definition.type === 'union' && typeof definition.discriminator === 'string') {
    const key = definition.discriminator;
    return (definition.options as AnySchema[]).map((option) => {
      const shape = definitionOf(option).shape as Record<string, AnySchema>;
      const literal = definitionOf(unwrap(shape[key]!).core).values as unknown[];
      return { variant: `${owner} with ${key}: ${String(literal[0])}`, object: option };
    });
  }
  // a union of a shorthand value and objects (`none` or a backend block): the objects' keys
  if (definition.type === 'union')
    return (definition.options as AnySchema[]).flatMap((option) => objectVariants(unwrap(option).core, owner));
  return [];
}

/**
 * Every key below `schema` (an object, or a union of objects), depth first in declaration order.
 * @param prefix dotted path of `schema` itself ('' for the root)
 */
export function schemaKeyRows(schema: AnySchema, prefix = '', variant = ''): SchemaKeyRow[] {
  const rows: SchemaKeyRow[] = [];
  const { core } = unwrap(schema);
  for (const { variant: own, object } of objectVariants(core, prefix.replace(/\.$/, ''))) {
    const label = [variant, own].filter((part) => part !== '').join(', ');
    const definition = definitionOf(object);
    for (const [name, child] of Object.entries(definition.shape as Record<string, AnySchema>))
      rows.push(...keyRows(child, `${prefix}${name}`, label));
    const catchall = definition.catchall as AnySchema | undefined;
    if (catchall && definitionOf(catchall).type !== 'never' && definitionOf(catchall).type !== 'unknown')
      rows.push(...keyRows(catchall, `${prefix}<language>`, label));
  }
  return rows;
}

function keyRows(schema: AnySchema, path: string, variant: string): SchemaKeyRow[] {
  const unwrapped = unwrap(schema);
  const definition = definitionOf(unwrapped.core);
  const children: SchemaKeyRow[] = [];
  if (definition.type === 'record') {
    const value = definition.valueType as AnySchema;
    if (!['unknown', 'any'].includes(definitionOf(unwrap(value).core).type)) {
      const keyName = isLanguageKey(definition.keyType as AnySchema) ? '<language>' : '<name>';
      children.push(...keyRows(value, `${path}.${keyName}`, variant));
    }
  } else {
    children.push(...schemaKeyRows(unwrapped.core, `${path}.`, variant));
  }
  const row: SchemaKeyRow = {
    path,
    variant,
    type: describeType(schema),
    hasDefault: unwrapped.hasDefault,
    default: unwrapped.default,
    optional: unwrapped.optional,
    description: unwrapped.description ?? '',
    example: exampleOf(unwrapped),
    hasChildren: children.length > 0,
  };
  return [row, ...children];
}

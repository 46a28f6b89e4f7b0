/**
 * Reading one NXT timed-units file (`<dialogue>.<agent>.timed-units.xml`, one speaker's `tu` words,
 * `sil` silences and `noi` noises with `start`/`end` in seconds); ./nxt.ts turns the two files of a
 * dialogue into a reference recording. The XML is validated first, so malformed XML is an error
 * naming file, line and column.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Centiseconds } from '../pipeline/model/types.ts';
import { parseSecondsToCentiseconds, readTextFile, ReferenceCorpusError } from './reference-recording.ts';
import { skippedRecordOf, type SkippedRecord } from './skipped-records.ts';

/** One element of a timed-units file. */
export interface NxtTimedElement {
  /** `tu`, `sil` or `noi`. */
  kind: 'tu' | 'sil' | 'noi';
  id: string;
  start: Centiseconds;
  end: Centiseconds;
  /** Element text (`tu`), trimmed, entities decoded; empty for `sil`/`noi`. */
  text: string;
  /** `noi` type attribute; empty when absent. */
  noiseType: string;
  /** `realisation` attribute of a `tu` (the pronounced form), when present. */
  realisation?: string;
  /** 1-based line of the element's start tag. */
  line: number;
}

/** The parsed content of one timed-units file. */
export interface NxtTimedUnitsFile {
  file: string;
  /** Elements in file order. */
  elements: NxtTimedElement[];
  /** Elements other than `tu`/`sil`/`noi` that were skipped, by name. */
  skippedElements: Map<string, number>;
  /** `tu`/`sil`/`noi` elements skipped for a missing or bad time (`strict: false`), in file order. */
  skippedRecords?: SkippedRecord[];
}

/** 1-based line number of a character offset, from the offsets where lines start. */
function lineAt(lineStarts: readonly number[], offset: number): number {
  let low = 0;
  let high = lineStarts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((lineStarts[middle] as number) <= offset) low = middle + 1;
    else high = middle;
  }
  return low;
}

type OrderedNode = Record<string, unknown> & { ':@'?: Record<string, string> };

/**
 * Parses the text of one NXT timed-units file.
 *
 * @param text file content (UTF-8, byte-order mark already removed).
 * @param file path for messages.
 * @param options `strict: false` skips an element with a missing or bad time instead of throwing.
 * @returns the `tu`/`sil`/`noi` elements (times in integer centiseconds) and counts of other elements.
 * @throws ReferenceCorpusError naming the file and line when the XML is malformed, the root element
 *   is missing, or an element lacks `start`/`end`, has a time that is not a non-negative decimal, or
 *   ends before it starts (these three only when strict).
 */
export function parseNxtTimedUnits(text: string, file: string, options: { strict?: boolean } = {}): NxtTimedUnitsFile {
  const skippedRecords: SkippedRecord[] = [];
  const validation = XMLValidator.validate(text);
  if (validation !== true) {
    throw new ReferenceCorpusError(
      file,
      { line: validation.err.line },
      `malformed XML (column ${validation.err.col}): ${validation.err.msg}`,
    );
  }
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: false,
    captureMetaData: true,
  });
  const metadata = XMLParser.getMetaDataSymbol() as unknown as symbol;
  const document = parser.parse(text) as OrderedNode[];
  const lineStarts = [0];
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lineStarts.push(index + 1);
  const lineOf = (node: OrderedNode): number => {
    const start = (node[metadata as unknown as string] as { startIndex?: number } | undefined)?.startIndex;
    return start === undefined ? 1 : lineAt(lineStarts, start);
  };
  const rootNode = document.find((node) =>
    Object.keys(node).some((key) => key !== ':@' && !key.startsWith('?') && key !== '#text' && key !== '#comment'),
  );
  if (rootNode === undefined) throw new ReferenceCorpusError(file, {}, 'no root element');
  const rootName = Object.keys(rootNode).find((key) => key !== ':@') as string;
  const children = rootNode[rootName] as OrderedNode[];
  const elements: NxtTimedElement[] = [];
  const skippedElements = new Map<string, number>();
  for (const child of children) {
    const name = Object.keys(child).find((key) => key !== ':@') as string;
    if (name === '#text' || name === '#comment') continue;
    if (name !== 'tu' && name !== 'sil' && name !== 'noi') {
      skippedElements.set(name, (skippedElements.get(name) ?? 0) + 1);
      continue;
    }
    const line = lineOf(child);
    const attributes = child[':@'] ?? {};
    const time = (attribute: 'start' | 'end'): Centiseconds => {
      const value = attributes[attribute];
      if (value === undefined)
        throw new ReferenceCorpusError(file, { line, column: attribute }, `<${name}> has no ${attribute} attribute`);
      const centiseconds = parseSecondsToCentiseconds(value);
      if (centiseconds === undefined) {
        throw new ReferenceCorpusError(
          file,
          { line, column: attribute },
          `<${name}> ${attribute}=${JSON.stringify(value)} is not a non-negative decimal number of seconds`,
        );
      }
      return centiseconds;
    };
    let start: Centiseconds;
    let end: Centiseconds;
    try {
      start = time('start');
      end = time('end');
      if (end < start) {
        throw new ReferenceCorpusError(
          file,
          { line, column: 'end' },
          `<${name}> ends (${attributes.end}) before it starts (${attributes.start})`,
        );
      }
    } catch (error) {
      if ((options.strict ?? true) || !(error instanceof ReferenceCorpusError)) throw error;
      skippedRecords.push(skippedRecordOf(error));
      continue;
    }
    const content = (child[name] as OrderedNode[])
      .map((part) => (typeof part['#text'] === 'string' ? part['#text'] : ''))
      .join('');
    elements.push({
      kind: name,
      id: attributes.id ?? '',
      start,
      end,
      text: name === 'tu' ? content.replace(/\s+/g, ' ').trim() : '',
      noiseType: attributes.type ?? '',
      ...(attributes.realisation === undefined ? {} : { realisation: attributes.realisation }),
      line,
    });
  }
  return { file, elements, skippedElements, skippedRecords };
}

/** Reads and parses one timed-units file ({@link parseNxtTimedUnits}). */
export async function readNxtTimedUnits(file: string, options: { strict?: boolean } = {}): Promise<NxtTimedUnitsFile> {
  return parseNxtTimedUnits(await readTextFile(file, 'NXT timed-units'), file, options);
}

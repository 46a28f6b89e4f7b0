/**
 * JSON text for files people read and diff (the timing statistics, the fidelity report): like
 * `JSON.stringify(value, null, 2)` but with arrays of numbers wrapped at about 100 characters.
 */

/**
 * Deterministic JSON text: 2-space indentation, arrays of numbers wrapped at about 100 characters,
 * keys in insertion order, `undefined` properties left out. Shared by the statistics file and the
 * fidelity report (pipeline/timeline).
 */
export function formatJson(value: unknown, indent = ''): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((item) => typeof item === 'number')) {
      const lines: string[] = [];
      let line = '';
      for (const item of value as number[]) {
        const text = JSON.stringify(item);
        if (line !== '' && inner.length + line.length + text.length + 2 > 100) {
          lines.push(line);
          line = '';
        }
        line = line === '' ? text : `${line}, ${text}`;
      }
      lines.push(line);
      return `[\n${lines.map((text) => `${inner}${text}`).join(',\n')}\n${indent}]`;
    }
    return `[\n${value.map((item) => `${inner}${formatJson(item, inner)}`).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${formatJson(item, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}

/** Small HTML helpers for the static report: escaping and tables. */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const HTML_SPECIAL = /[&<>"']/;
const HTML_SPECIAL_ALL = /[&<>"']/g;

/**
 * Escapes text for HTML content and attribute values (`& < > " '`). Text without any of them (most
 * of a report's ids, paths and numbers) is returned as it is, without a replace.
 */
export function escapeHtml(text: string): string {
  if (!HTML_SPECIAL.test(text)) return text;
  return text.replace(HTML_SPECIAL_ALL, (char) => HTML_ESCAPES[char]!);
}

/** A cell: text (escaped) or `{ html }` (inserted as is). */
export type Cell = string | number | null | { html: string };

/** A cell's HTML: text escaped, `{ html }` as is, null as an em dash. */
export function cellHtml(cell: Cell): string {
  if (cell === null) return '—';
  if (typeof cell === 'object') return cell.html;
  return escapeHtml(String(cell));
}

/** A table with a header row; `null` cells print as an em dash. */
export function htmlTable(header: readonly string[], rows: readonly (readonly Cell[])[], className = ''): string {
  const head = `<tr>${header.map((name) => `<th>${escapeHtml(name)}</th>`).join('')}</tr>`;
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${cellHtml(cell)}</td>`).join('')}</tr>`).join('\n');
  return `<table${className ? ` class="${escapeHtml(className)}"` : ''}>\n${head}\n${body}\n</table>`;
}

/**
 * A complete page (UTF-8, the report's style sheet at `{assets}/report.css`, optional script);
 * `language` is the page's `lang` (a Japanese page gets Japanese glyph forms from the CJK font).
 */
export function htmlPage(title: string, assets: string, body: string, script?: string, language = 'en'): string {
  return `<!DOCTYPE html>
<html lang="${escapeHtml(language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeHtml(assets)}/report.css">
</head>
<body>
${body}
${script ? `<script src="${escapeHtml(assets)}/${escapeHtml(script)}"></script>\n` : ''}</body>
</html>
`;
}

/** A number with `digits` decimals, or null when missing. */
export function fixed(value: number | null | undefined, digits: number): string | null {
  return value === null || value === undefined || !Number.isFinite(value) ? null : value.toFixed(digits);
}

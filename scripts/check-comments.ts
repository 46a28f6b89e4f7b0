/**
 * The comment check: comments in the project's code say what the code does today and why, so they
 * name no issue numbers, dates, machine loads or earlier states ("was 3 s before"), and they cite the
 * project's own specification pages (`docs/events.md`, `docs/dataset-format.md`) rather than files that
 * exist only outside the repository.
 *
 * `npx tsx scripts/check-comments.ts [file …]` prints one `file:line: rule: text` per finding and exits
 * 1 when there is any; with no files it checks every `.ts` and `.js` file under the source folders.
 * Comments are found with TypeScript's own parser, so strings, templates and regular expressions that
 * look like comments are not read as comments.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The folders whose code the check reads, relative to the project root. */
export const CHECKED_FOLDERS = ['pipeline', 'stages', 'corpora', 'scripts'] as const;

/** One comment line the check refuses. `line` is 1-based. */
export interface CommentFinding {
  file: string;
  line: number;
  rule: string;
  text: string;
}

const MONTH = '(?:January|February|March|April|May|June|July|August|September|October|November|December)';

/**
 * The rules, each a name and a pattern over one comment line. A reference to another project's
 * tracker (`owner/repo#12`, a URL) is not an issue number of this project and is allowed.
 */
export const COMMENT_RULES: ReadonlyArray<{ rule: string; pattern: RegExp }> = [
  { rule: 'issue number', pattern: /\bissues? #?\d+\b/i },
  {
    rule: 'date',
    pattern: new RegExp(`\\b${MONTH} \\d{1,2}\\b|\\b\\d{1,2} ${MONTH}\\b|\\b20\\d\\d-[01]\\d-[0-3]\\d\\b`),
  },
  {
    rule: 'machine load',
    pattern:
      /\bload (?:average )?(?:of )?\d|\b(?:idle|loaded|busy|quiet) (?:machine|host)s?\b|\bmachine(?:'s)? load\b/i,
  },
  {
    rule: 'history',
    pattern:
      /\bwas [\d.,]+ ?[a-zµ%×]* before\b|\bbefore (?:this|the) (?:change|fix|refactor)\b|\bused to be\b|\bpreviously\b|\bthe old (?:code|version)\b|\b(?:fell|dropped|rose|went down|went up) from [\d.,]+/i,
  },
];

/**
 * Applied to every line, code and strings included: the event rules and the on-disk format are
 * `docs/events.md` and `docs/dataset-format.md` of this repository; `../shared` is not part of a clone.
 */
export const SPECIFICATION_RULE = {
  rule: 'specification outside the repository',
  pattern: /(?<![\w/-])events\.md\b|\bm3-format\.md\b|\.\.\/shared\/docs\b/,
} as const;

/** Issue numbers in code and strings (test names, messages); comment lines are the comment rules'. */
const ISSUE_IN_CODE = { rule: 'issue number', pattern: /\bissues? #?\d+\b/i } as const;

/** Text between backticks or double quotes: examples of input, which may hold dates. */
const QUOTED = /`[^`]*`|"[^"]*"|“[^”]*”/g;

const FOREIGN_TRACKER = /[\w.-]+\/[\w.-]+#\d+|https?:\/\//;

/** The comment lines of one source text, with their 1-based line numbers. */
export function commentLines(sourceText: string, fileName = 'source.ts'): Array<{ line: number; text: string }> {
  const kind = /\.[cm]?js$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, sourceText, ts.ScriptTarget.Latest, false, kind);
  // every comment is trivia before some token: the same-line comments after the previous token
  // ("trailing") and the lines before this one ("leading"); a comment is keyed by its start
  const ranges = new Map<number, number>();
  const visit = (node: ts.Node): void => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const start = node.getFullStart();
    const trivia = [
      ...(ts.getTrailingCommentRanges(sourceText, start) ?? []),
      ...(ts.getLeadingCommentRanges(sourceText, start) ?? []),
    ];
    for (const range of trivia) ranges.set(range.pos, range.end);
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  const found: Array<{ line: number; text: string }> = [];
  for (const [pos, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const first = source.getLineAndCharacterOfPosition(pos).line;
    sourceText
      .slice(pos, end)
      .split('\n')
      .forEach((text, offset) => found.push({ line: first + offset + 1, text }));
  }
  return found;
}

/**
 * A citation of a page of this repository, with the section or words it quotes:
 * `docs/failures.md "Exit codes"`, `docs/events.md, "Synthetic dialogues"`. Another project's README
 * (`moshi-finetune's README "…"`) is not one.
 */
const PAGE_CITATION =
  /(?<!(?:[\w-]'s|\bits|\btheir) )(?<![\w./-])(README(?:\.md)?|CONTRIBUTING(?:\.md)?|docs\/[\w-]+\.md)(?:'s)?,? (?:section )?["“]([^"”]+)["”]/g;

/** A page's text for the citation check, or null when the page does not exist. */
export type PageReader = (page: string) => string | null;

const normalized = (text: string) =>
  text
    .replace(/[\s#*`_]+/g, ' ')
    .trim()
    .toLowerCase();

/** The headings of a Markdown page, normalized: a citation names a section by (part of) its heading. */
const headingsOf = (page: string) =>
  page
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map(normalized);

/**
 * The findings in one file's text; `file` only labels them. With `readPage`, a citation of a page of
 * this repository must name a page that exists and quote (part of) one of its headings.
 */
export function checkCommentText(file: string, sourceText: string, readPage?: PageReader): CommentFinding[] {
  const findings: CommentFinding[] = [];
  const comments = commentLines(sourceText, file);
  const commented = new Set(comments.filter(({ text }) => /\bissues? #?\d+\b/i.test(text)).map(({ line }) => line));
  for (const { line, text } of comments) {
    const unquoted = text.replace(QUOTED, '""');
    for (const { rule, pattern } of COMMENT_RULES) {
      if (!pattern.test(unquoted)) continue;
      if (rule === 'issue number' && FOREIGN_TRACKER.test(text)) continue;
      findings.push({ file, line, rule, text: text.trim() });
    }
  }
  sourceText.split('\n').forEach((text, index) => {
    // an issue number is history in a test name or a message too, not only in a comment
    if (ISSUE_IN_CODE.pattern.test(text) && !FOREIGN_TRACKER.test(text) && !commented.has(index + 1)) {
      findings.push({ file, line: index + 1, rule: ISSUE_IN_CODE.rule, text: text.trim() });
    }
    if (SPECIFICATION_RULE.pattern.test(text)) {
      findings.push({ file, line: index + 1, rule: SPECIFICATION_RULE.rule, text: text.trim() });
    }
    if (!readPage) return;
    for (const [, cited = '', words = ''] of text.matchAll(PAGE_CITATION)) {
      const page = cited.endsWith('.md') ? cited : `${cited}.md`;
      const pageText = readPage(page);
      if (pageText === null || !headingsOf(pageText).some((heading) => heading.includes(normalized(words)))) {
        const rule = pageText === null ? 'citation of a missing page' : 'citation of a missing section';
        findings.push({ file, line: index + 1, rule, text: text.trim() });
      }
    }
  });
  return findings.sort((a, b) => a.line - b.line);
}

/** Every `.ts`/`.js` file under the checked folders of `root`, relative to it, sorted. */
export function checkedFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (relative: string): void => {
    for (const name of readdirSync(path.join(root, relative))) {
      const child = path.join(relative, name);
      if (name === 'node_modules' || name === 'fixtures') continue;
      if (statSync(path.join(root, child)).isDirectory()) walk(child);
      else if (/\.(?:ts|js)$/.test(name)) files.push(child.split(path.sep).join('/'));
    }
  };
  for (const folder of CHECKED_FOLDERS) walk(folder);
  return files.sort();
}

/** Reads pages of the repository at `root` (relative paths), null for a missing one. */
export function pageReader(root: string): PageReader {
  return (page) => (existsSync(path.join(root, page)) ? readFileSync(path.join(root, page), 'utf8') : null);
}

function main(argv: string[]): number {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const files = argv.length > 0 ? argv : checkedFiles(root);
  const readPage = pageReader(root);
  const findings = files.flatMap((file) =>
    checkCommentText(file, readFileSync(path.resolve(root, file), 'utf8'), readPage),
  );
  for (const finding of findings) console.log(`${finding.file}:${finding.line}: ${finding.rule}: ${finding.text}`);
  if (findings.length > 0) console.error(`check-comments: ${findings.length} comment lines to reword`);
  return findings.length > 0 ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}

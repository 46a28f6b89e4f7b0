import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../pipeline/config.ts';
import { checkCommentText, checkedFiles, commentLines, pageReader } from './check-comments.ts';

// the page names are put together so that this file does not cite them itself
// so are the words the rules look for
const ISSUE = ['iss', 'ue'].join('');
const DECEMBER = ['Decem', 'ber'].join('');
const EVENTS_PAGE = ['events', 'md'].join('.');
const FORMAT_PAGE = ['m3-format', 'md'].join('.');
const SHARED_DOCS = ['..', 'shared', 'docs'].join('/');

const rulesOf = (source: string) => checkCommentText('x.ts', source).map((finding) => finding.rule);

describe('the comment check', () => {
  it('finds issue numbers, dates, machine loads and history in comments', () => {
    expect(rulesOf(`// the limit from ${ISSUE} 19\n`)).toEqual(['issue number']);
    expect(rulesOf(`/* ${ISSUE.toUpperCase()} 3, "done when" */`)).toEqual(['issue number']);
    expect(rulesOf(`// measured 3 ${DECEMBER} on two cores\n`)).toEqual(['date']);
    expect(rulesOf('// measured 2026-12-02\n')).toEqual(['date']);
    expect(rulesOf('// the test failed once on a loaded machine\n')).toEqual(['machine load']);
    expect(rulesOf('// 19.3 s at load 18\n')).toEqual(['machine load']);
    expect(rulesOf('// the step fell from 0.85 s to 0.2 s\n')).toEqual(['history']);
    expect(rulesOf('// it was 3 s before\n')).toEqual(['history']);
  });

  it('allows references to other projects, and dates given as quoted examples of input', () => {
    expect(rulesOf('// a known onnxruntime bug (microsoft/onnxruntime#680)\n')).toEqual([]);
    expect(rulesOf('// see https://github.com/a/b/issues/324\n')).toEqual([]);
    expect(rulesOf(`// \`12 ${DECEMBER} 2017\` -> "the twelfth of ${DECEMBER}"\n`)).toEqual([]);
    expect(rulesOf('// IPUs are joined across pauses of at most 0.50 s\n')).toEqual([]);
  });

  it('reads comments only, not strings, regular expressions or templates, for the history rules', () => {
    expect(rulesOf(`const s = 'fell from 3 s to 1 s on 3 ${DECEMBER}';\n`)).toEqual([]);
    expect(rulesOf(`const r = /a\\/\\/ 3 ${DECEMBER}/;\n`)).toEqual([]);
    expect(rulesOf('const t = `${a} // on a loaded machine`;\n')).toEqual([]);
    // after a block and a division, comments are still found (a scanner without the parser loses them)
    expect(rulesOf(`function f() { return { a: 1 }; }\nconst x = a / b / c;\n// ${ISSUE} 19\n`)).toEqual([
      'issue number',
    ]);
    expect(rulesOf('const t = `a${b}c`;\nif (x) {\n  y();\n} // ' + ISSUE + ' 23\n')).toEqual(['issue number']);
    expect(commentLines('const a = 1; // one\n/* two\n three */\n')).toEqual([
      { line: 1, text: '// one' },
      { line: 2, text: '/* two' },
      { line: 3, text: ' three */' },
    ]);
  });

  it('finds issue numbers in test names and messages too, once per line', () => {
    expect(rulesOf(`it('splits a question (the ${ISSUE} 19 cases)', () => {});\n`)).toEqual(['issue number']);
    expect(rulesOf(`f(); // ${ISSUE} 19\n`)).toEqual(['issue number']);
    expect(rulesOf(`const u = 'https://github.com/a/b/${ISSUE}s/1 and ${ISSUE} 1';\n`)).toEqual([]);
  });

  it('finds specification pages outside the repository in code and strings too', () => {
    expect(rulesOf(`it('holds the ${EVENTS_PAGE} values', () => {});\n`)).toEqual([
      'specification outside the repository',
    ]);
    expect(rulesOf(`// the layout of ${SHARED_DOCS}/services.md\n`)).toEqual(['specification outside the repository']);
    expect(rulesOf(`// the layout of ${FORMAT_PAGE}\n`)).toEqual(['specification outside the repository']);
    expect(rulesOf('// the rules of docs/events.md and docs/dataset-format.md\n')).toEqual([]);
  });

  it('finds citations of pages or sections the repository does not have', () => {
    const pages: Record<string, string> = {
      'README.md': '# duplexsynth\n## Adding a language\n',
      'docs/events.md': '## Input: speech *segments* per channel\nWork in integer centiseconds.\n',
    };
    const readPage = (page: string) => pages[page] ?? null;
    // the citations are put together so that this file does not make them itself
    const rules = (page: string, words: string, before = '') =>
      checkCommentText('x.ts', `// ${before}${page} "${words}"\n`, readPage).map((finding) => finding.rule);
    expect(rules('README', 'Adding a language')).toEqual([]);
    expect(rules('docs/events.md,', 'input: speech segments')).toEqual([]);
    // words of the page that are no heading do not name a section
    expect(rules('docs/events.md,', 'work in integer centiseconds')).toEqual(['citation of a missing section']);
    expect(rules('README', 'Throughput')).toEqual(['citation of a missing section']);
    expect(rules('docs/speed.md', 'Throughput')).toEqual(['citation of a missing page']);
    expect(rules('README', 'Prepare dataset', "moshi-finetune's ")).toEqual([]);
    expect(rules('README', 'Prepare dataset', 'in the layout its ')).toEqual([]);
    expect(rules('docs/dataset-format.md', 'One JSONL line', 'another-project/')).toEqual([]);
  });

  it('passes on every source file of the project', () => {
    const readPage = pageReader(PROJECT_ROOT);
    const files = checkedFiles(PROJECT_ROOT);
    expect(files).toContain('scripts/check-comments.ts');
    const findings = files.flatMap((file) =>
      checkCommentText(file, readFileSync(path.join(PROJECT_ROOT, file), 'utf8'), readPage).map(
        (finding) => `${finding.file}:${finding.line}: ${finding.rule}: ${finding.text}`,
      ),
    );
    expect(findings, 'reword these comments (npx tsx scripts/check-comments.ts)').toEqual([]);
  });
});

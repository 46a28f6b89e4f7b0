/**
 * The generated documentation pages: each a file of the repository and the function that renders it.
 * `npm run docs` (scripts/generate-docs.ts) writes them; `--check` and scripts/docs/docs-pages.test.ts
 * report the stale ones.
 */
import { renderCliReference } from './cli-reference.ts';
import { renderConfigurationPage } from './configuration-page.ts';
import { renderLanguagePacksPage } from './language-packs-page.ts';

/** One generated page: its path from the project root and its rendering. */
export interface DocsPage {
  file: string;
  render: () => string | Promise<string>;
}

/** Every generated page. */
export const DOCS_PAGES: DocsPage[] = [
  { file: 'docs/cli.md', render: renderCliReference },
  { file: 'docs/configuration.md', render: renderConfigurationPage },
  { file: 'docs/language-packs.md', render: renderLanguagePacksPage },
];

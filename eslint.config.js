// ESLint: typescript-eslint's recommended rules with type information, plus no-floating-promises
// (a promise nobody awaits loses its error). Formatting is Prettier's job (.prettierrc.json).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'outputs/', 'corpora/demo/*.json', '.dist-build-*/', '**/*.wasm'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_name` marks a value left out on purpose (a destructured field dropped from a copy)
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // the text checks match control characters on purpose (terminal escapes, C0 codes in a corpus)
      'no-control-regex': 'off',
    },
  },
  {
    // the report's page scripts run in the browser
    files: ['pipeline/report/assets/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    // tests read loosely typed JSON written by other programs (Python consumers, loaders)
    files: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);

/**
 * Build and dataset names that end like a build's own folders (`.partial`, `.previous`, `.lock`) are
 * refused by the config schema and by the check of a config built in code, naming the setting.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config.ts';
import { checkBuildSettings } from './run/output-checks.ts';

/** The config `value` (beside a corpus path) resolved from `test.yaml` in /tmp. */
const resolve = (value: object) => () => resolveConfig({ corpus: { path: 'x.json' }, ...value }, 'test.yaml', '/tmp');

const REASON =
  'a build names its own folders so (".partial" while writing, ".previous" for the old one kept during a commit, ".lock")';

describe('reserved name endings', () => {
  it.each(['.partial', '.previous', '.lock'])(
    'a dataset name ending in %s is refused, naming datasets.en',
    (suffix) => {
      expect(resolve({ datasets: { en: `x${suffix}` } })).toThrow(
        `datasets.en: must not end in "${suffix}": ${REASON}`,
      );
    },
  );

  it('a build name ending in .previous is refused, naming name', () => {
    expect(resolve({ name: 'tq.previous' })).toThrow(`name: must not end in ".previous": ${REASON}`);
  });

  it('a name that only contains the ending elsewhere is accepted', () => {
    expect(resolve({ name: 'tq.previous-run', datasets: { en: 'x.partial_1' } })).not.toThrow();
  });

  it('a config built in code: the dataset name x.previous is refused with the setting and the value', () => {
    const config = resolve({})();
    expect(() => checkBuildSettings({ ...config, datasets: { ...config.datasets, en: 'x.previous' } })).toThrow(
      `datasets.en: "x.previous" must not end in ".previous": ${REASON}`,
    );
  });
});

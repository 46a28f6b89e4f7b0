/**
 * Layering check (`npm run layering`, part of `npm test`): dependency-cruiser 17 over the TypeScript
 * sources. Layers, top to bottom (README "Layout"); an import may go down or sideways within a layer,
 * never up:
 *
 *   1 scripts/                                     the CLI, its commands, scripts/*.ts tools
 *   2 pipeline/orchestration/                      the MT-QA build: the list of stages and the lock
 *   3 stages/                                      one module per stage
 *   4 pipeline/run/                                stage machinery (Stage, runner, lock, guards, progress)
 *   5 pipeline/config.ts, pipeline/config-*.ts     the build config: its schema is assembled from the
 *                                                  services' settings schemas, so it sits above them
 *   6 pipeline/{report,export,quality,timeline}, corpora/
 *   7 pipeline/{services,events,audio,text,alignment,prompts}
 *   8 pipeline/{storage,model}
 *
 * Tests (`*.test.ts`), benchmarks (`*.bench.ts`), `testing/` folders and the test fixtures modules
 * may import anything and are not checked for layering; cycles are checked everywhere (a cycle
 * through a test is still a cycle).
 */

/** Modules that only tests and benchmarks use: exempt from the layering rules. */
const TEST_SUPPORT = [
  '\\.test\\.ts$',
  '\\.bench\\.ts$',
  '(^|/)testing/',
  '^pipeline/events/test-fixtures\\.ts$',
  '^pipeline/timeline/test-helpers\\.ts$',
  '^corpora/reference-test-audio\\.ts$',
  '^vitest\\.config\\.ts$',
];

/** Layers from the top; each is a list of path patterns (regular expressions on the path from the project root). */
const LAYERS = [
  { name: 'cli', paths: ['^scripts/'] },
  { name: 'orchestration', paths: ['^pipeline/orchestration/'] },
  { name: 'stages', paths: ['^stages/'] },
  { name: 'run', paths: ['^pipeline/run/'] },
  { name: 'config', paths: ['^pipeline/config\\.ts$', '^pipeline/config-[a-z-]+\\.ts$'] },
  { name: 'analysis', paths: ['^pipeline/(report|export|quality|timeline)/', '^corpora/'] },
  { name: 'services', paths: ['^pipeline/(services|events|audio|text|alignment|prompts)/'] },
  { name: 'foundation', paths: ['^pipeline/(storage|model)/'] },
];

/** `paths` of a layer as one pattern. */
function layerPattern(index) {
  return `(${LAYERS[index].paths.join('|')})`;
}

const layerRules = LAYERS.slice(1).map((layer, index) => {
  const position = index + 1;
  const higher = LAYERS.slice(0, position).map((_, above) => layerPattern(above));
  return {
    name: `no-upward-from-${layer.name}`,
    comment: `${layer.name} (layer ${position + 1}) imports only from its own layer or lower ones (${LAYERS.slice(
      position,
    )
      .map((l) => l.name)
      .join(', ')}).`,
    severity: 'error',
    from: { path: layerPattern(position), pathNot: [...TEST_SUPPORT, ...higher] },
    to: { path: higher, pathNot: [...TEST_SUPPORT] },
  };
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle (type-only imports included: a cycle of types is still a tangle).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'in-a-layer',
      comment:
        'Every source module is in one of the layers above (a new folder gets a place in LAYERS and in the README "Layout").',
      severity: 'error',
      from: {
        path: '^(pipeline|stages|corpora|scripts)/',
        pathNot: [...TEST_SUPPORT, ...LAYERS.map((_, index) => layerPattern(index))],
      },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every relative import resolves to a file.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: ['^node_modules/', '^dist/', '^outputs/'] },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts', '.json'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};

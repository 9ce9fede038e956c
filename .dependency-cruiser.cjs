/**
 * Import rules checked by `npm run lint` (dependency-cruiser): imports point down, never in a circle,
 * and the product never reaches into the workbench or the tests. Type-only imports count
 * (`tsPreCompilationDeps`): a circle of types is still a circle a reader has to untangle.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module must not depend on itself through others: move what both sides share to a module below them.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'product-not-workbench',
      severity: 'error',
      comment: 'lib/ and lambdas/ are what Lambda runs, CDK deploys and a producer imports: they never import the workbench.',
      from: { path: '^(lib|lambdas)/' },
      to: { path: '^workbench/' },
    },
    {
      name: 'lambdas-only-lib',
      severity: 'error',
      comment: 'A Lambda entry is thin: it wires lib/ and nothing else of the repository.',
      from: { path: '^lambdas/' },
      to: { path: '^(bin|lambdas|test|workbench)/' },
    },
    {
      name: 'nothing-imports-tests-or-entries',
      severity: 'error',
      comment: 'bin/ and lambdas/ are entries and test/ is on top: nothing in the product or the workbench imports them.',
      from: { path: '^(lib|workbench)/' },
      to: { path: '^(bin|lambdas|test)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|cdk\\.out|\\.cache)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};

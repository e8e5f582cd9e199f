// Module boundaries are architecture: domain and contract code stays free of frameworks and I/O.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const frameworkAndIo = [
  '@nestjs/*',
  'mongodb',
  'nats',
  '@nats-io/*',
  'dockerode',
  'better-sqlite3',
  'fs',
  'node:fs',
  'fs/promises',
  'node:fs/promises',
  'child_process',
  'node:child_process',
];

// Nx's `bannedExternalImports` only sees npm packages, never Node built-ins, so the I/O built-ins are
// refused in the framework-free projects' sources (tests may still start processes) with
// `no-restricted-imports`. Keep this list in step with the type:core/contracts/ports/domain/application tags.
const frameworkFreeSources = [
  'libs/core/**/*.ts',
  'libs/contracts/**/*.ts',
  'libs/ports/**/*.ts',
  'libs/harness/**/*.ts',
  'libs/session/**/*.ts',
  'libs/sandbox/domain/**/*.ts',
  'libs/egress/domain/**/*.ts',
  'libs/sandbox/lifecycle/**/*.ts',
  'libs/sandbox/workflow/**/*.ts',
  'libs/turns/domain/**/*.ts',
  'libs/webhooks/domain/**/*.ts',
  'libs/vaults/domain/**/*.ts',
];
const ioBuiltins = ['fs', 'node:fs', 'fs/promises', 'node:fs/promises', 'child_process', 'node:child_process'];
const deepImportPatterns = ['@berth/*/src/*', '**/libs/*/src/*'];

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', 'tmp/**', 'apps/console/dist/**', '.nx/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-imports': ['error', { patterns: deepImportPatterns }],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          enforceBuildableLibDependency: false,
          depConstraints: [
            { sourceTag: 'type:core', onlyDependOnLibsWithTags: [], bannedExternalImports: frameworkAndIo },
            { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:core'], bannedExternalImports: frameworkAndIo },
            { sourceTag: 'type:ports', onlyDependOnLibsWithTags: ['type:core', 'type:contracts'], bannedExternalImports: frameworkAndIo },
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:core', 'type:contracts'], bannedExternalImports: frameworkAndIo },
            { sourceTag: 'type:application', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports', 'type:domain'], bannedExternalImports: frameworkAndIo },
            // Logs, metrics and traces: used by every adapter, platform and app; depends on nothing of theirs.
            { sourceTag: 'type:telemetry', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports'] },
            { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports', 'type:telemetry'] },
            { sourceTag: 'type:platform', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports', 'type:infra', 'type:telemetry'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports', 'type:domain', 'type:application', 'type:infra', 'type:platform', 'type:telemetry'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports', 'type:domain', 'type:application', 'type:infra', 'type:platform', 'type:testing', 'type:telemetry'] },
            // The gateway reaches session rules only through the use cases (which use the domain): never a domain library or the kernel itself.
            { sourceTag: 'scope:gateway', onlyDependOnLibsWithTags: ['scope:shared', 'scope:session-api'] },
            { sourceTag: 'scope:session-api', onlyDependOnLibsWithTags: ['scope:session-api', 'scope:session', 'scope:shared'] },
            { sourceTag: 'scope:session', onlyDependOnLibsWithTags: ['scope:session', 'scope:shared'] },
            { sourceTag: 'scope:sandbox', onlyDependOnLibsWithTags: ['scope:sandbox', 'scope:shared'] },
            { sourceTag: 'scope:turns', onlyDependOnLibsWithTags: ['scope:turns', 'scope:shared'] },
          ],
        },
      ],
    },
  },
  {
    files: frameworkFreeSources,
    ignores: ['**/*.spec.ts', '**/testing/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: deepImportPatterns,
          paths: ioBuiltins.map((name) => ({ name, message: 'framework-free code does no I/O itself: take a port instead.' })),
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'libs/testing/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Plain CommonJS config and helper scripts (jest, tooling) load with require().
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
];

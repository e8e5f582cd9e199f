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
      'no-restricted-imports': ['error', { patterns: ['@berth/*/src/*', '**/libs/*/src/*'] }],
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
            { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports'] },
            { sourceTag: 'type:platform', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports', 'type:infra'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports', 'type:domain', 'type:application', 'type:infra', 'type:platform'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:core', 'type:contracts', 'type:ports', 'type:domain', 'type:application', 'type:infra', 'type:platform', 'type:testing'] },
            { sourceTag: 'scope:gateway', notDependOnLibsWithTags: ['type:domain', 'type:application'] },
            { sourceTag: 'scope:session', onlyDependOnLibsWithTags: ['scope:session', 'scope:shared'] },
            { sourceTag: 'scope:sandbox', onlyDependOnLibsWithTags: ['scope:sandbox', 'scope:shared'] },
            { sourceTag: 'scope:turns', onlyDependOnLibsWithTags: ['scope:turns', 'scope:shared'] },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'libs/testing/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
];

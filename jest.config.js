// One jest run, three projects selected by file suffix (see docs/testing.md):
//   unit: *.unit.spec.ts — pure, no processes;  int: *.int.spec.ts — real nats-server/SQLite/Docker;
//   e2e: *.e2e.spec.ts — whole platform through the gateway.
const { pathsToModuleNameMapper } = require('./scripts/jest/paths');
const swc = JSON.parse(require('fs').readFileSync(__dirname + '/.swcrc', 'utf8'));
delete swc.$schema;

const base = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { ...swc, swcrc: false }] },
  moduleNameMapper: pathsToModuleNameMapper(),
  setupFiles: ['reflect-metadata'],
  // NestJS 12 and @kubernetes/client-node 1.x (with its OpenID client) ship ESM only; jest runs
  // CommonJS, so their packages go through the same swc transform.
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|@kubernetes/client-node|openid-client|oauth4webapi|jose)/)'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/dist/', '<rootDir>/tmp/', '/lint-fixtures/'],
};

module.exports = {
  testSequencer: '<rootDir>/scripts/jest/sequencer.js',
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,scripts,tests}/**/*.unit.spec.ts'] },
    { ...base, displayName: 'int', testMatch: ['<rootDir>/{apps,libs,scripts,tests}/**/*.int.spec.ts'], slowTestThreshold: 30 },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/{apps,libs,scripts,tests}/**/*.e2e.spec.ts'], slowTestThreshold: 60 },
  ],
};

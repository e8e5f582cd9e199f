import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Shows the module-boundary rules firing on the session domain: frameworks and I/O are refused,
 * pure code passes. Packages are refused by `@nx/enforce-module-boundaries`; Node's I/O built-ins,
 * which Nx's rule does not see, by `no-restricted-imports` (see eslint.config.mjs). ESLint loads `eslint.config.mjs` through a dynamic import, which jest's module
 * sandbox cannot run, so the linting happens in a worker thread (plain Node). The rule reads Nx's
 * cached project graph; a clean clone has none (and the rule would silently skip), so the worker
 * builds it first.
 */
const repoRoot = resolve(__dirname, '../../../..');
const filePath = resolve(repoRoot, 'libs/session/domain/src/boundary-probe.ts');
const NX_RULE = '@nx/enforce-module-boundaries';
const BUILTIN_RULE = 'no-restricted-imports';

type LintMessage = { ruleId: string | null; severity: number; message: string };

const LINT_IN_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { createProjectGraphAsync } = require('@nx/devkit');
  const { ESLint } = require('eslint');
  await createProjectGraphAsync({ exitOnError: false });
  const eslint = new ESLint({ cwd: workerData.repoRoot });
  const results = [];
  for (const code of workerData.sources) {
    const [result] = await eslint.lintText(code, { filePath: workerData.filePath });
    results.push(result.messages.map((m) => ({ ruleId: m.ruleId, severity: m.severity, message: m.message })));
  }
  parentPort.postMessage({ results });
})().catch((error) => parentPort.postMessage({ error: String(error && error.stack || error) }));
`;

function lintInWorker(sources: readonly string[]): Promise<LintMessage[][]> {
  return new Promise((resolveLint, reject) => {
    const worker = new Worker(LINT_IN_WORKER, {
      eval: true,
      workerData: { repoRoot, filePath, sources },
      env: { ...process.env, NX_DAEMON: 'false', NX_WORKSPACE_ROOT_PATH: repoRoot },
    });
    worker.once('message', (reply: { results?: LintMessage[][]; error?: string }) => {
      void worker.terminate();
      if (reply.results) resolveLint(reply.results);
      else reject(new Error(reply.error));
    });
    worker.once('error', reject);
  });
}

/** [source, the import named in the error, the rule that refuses it] */
const banned: [string, string, string][] = [
  ["import { Injectable } from '@nestjs/common';\nexport const probe = Injectable;\n", '@nestjs/common', NX_RULE],
  ["import { NestFactory } from '@nestjs/core';\nexport const probe = NestFactory;\n", '@nestjs/core', NX_RULE],
  ["import { MongoClient } from 'mongodb';\nexport const probe = MongoClient;\n", 'mongodb', NX_RULE],
  ["import Docker from 'dockerode';\nexport const probe = Docker;\n", 'dockerode', NX_RULE],
  ["import { connect } from '@nats-io/transport-node';\nexport const probe = connect;\n", '@nats-io/transport-node', NX_RULE],
  ["import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n", 'node:fs', BUILTIN_RULE],
  ["import { readFile } from 'fs/promises';\nexport const probe = readFile;\n", 'fs/promises', BUILTIN_RULE],
  ["import { spawn } from 'node:child_process';\nexport const probe = spawn;\n", 'node:child_process', BUILTIN_RULE],
];
const otherLayer = "import type { SessionJournal } from '@berth/ports';\nexport type Probe = SessionJournal;\n";
const pure = [
  "import { parseIsoUtc } from '@berth/core';",
  "import type { SessionEvent } from '@berth/contracts';",
  'export const probe = (events: readonly SessionEvent[], at: string) => ({ count: events.length, at: parseIsoUtc(at) });',
  '',
].join('\n');

let results: LintMessage[][];

beforeAll(async () => {
  results = await lintInWorker([...banned.map(([code]) => code), otherLayer, pure]);
}, 120_000);

const errorsOf = (index: number, rule: string) => results[index].filter((m) => m.ruleId === rule && m.severity === 2);

describe('module boundaries of @berth/session-domain', () => {
  it.each(banned.map(([, name, rule], index) => [name, rule, index] as const))('refuses an import of %s (%s)', (name, rule, index) => {
    const errors = errorsOf(index, rule);
    expect(errors).toHaveLength(1);
    expect(errors[0].message).toContain(name);
  });

  it('refuses a library of a layer the domain may not depend on (ports)', () => {
    expect(errorsOf(banned.length, NX_RULE)).toHaveLength(1);
  });

  it('accepts pure code over core and contracts', () => {
    expect(results[banned.length + 1]).toEqual([]);
  });
});

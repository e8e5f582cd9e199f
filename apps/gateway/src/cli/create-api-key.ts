import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { randomIds, systemClock } from '@berth/core';
import { createStore } from '@berth/store';
import { issueApiKey } from '../auth/api-key';

const USAGE = 'usage: create-api-key --owner <owner-id> [--name <label>] [--store <url>] [--json | --quiet]   (store defaults to $BERTH_STORE_URL or sqlite:./.berth/berth.db)';

/**
 * Creates an API key for an owner and prints it once: only its prefix and the sha256 of its secret
 * are stored. The owner id is what isolates resources: every key of one owner sees the same data.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { owner: { type: 'string' }, name: { type: 'string' }, store: { type: 'string' }, json: { type: 'boolean' }, quiet: { type: 'boolean' } } });
  const owner = values.owner ?? '';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(owner)) {
    console.error(`--owner must be 1-64 letters, digits, '_' or '-'\n${USAGE}`);
    process.exit(2);
  }
  const storeUrl = values.store ?? process.env.BERTH_STORE_URL ?? 'sqlite:./.berth/berth.db';
  const path = storeUrl.startsWith('sqlite:') ? storeUrl.slice('sqlite:'.length).replace(/^\/\//, '') : '';
  if (path && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const store = createStore(storeUrl);
  await store.init();
  try {
    const issued = issueApiKey({ ownerId: owner, name: values.name ?? 'default', id: randomIds.next('bk'), now: systemClock.now() });
    await store.apiKeys.insert(issued.record);
    // stdout carries only the key (or JSON), so scripts can capture it; it cannot be shown again.
    if (!values.quiet && !values.json) console.error(`API key for owner ${owner} (shown once; only its hash is stored):`);
    if (values.json) console.log(JSON.stringify({ key: issued.key, owner_id: owner, prefix: issued.record.prefix }));
    else console.log(issued.key);
  } finally {
    await store.close();
  }
}

main().catch((e) => {
  console.error(`create-api-key failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});

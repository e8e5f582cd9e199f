import { eventsKeySlot, IdempotentCommandIds, IdempotentImportIds, importFingerprint, importKeySlot } from './idempotent-ids';

const ARCHIVE = 'a'.repeat(64);

describe('what an import Idempotency-Key is bound to', () => {
  it('is the same for the same archive and targets, however the targets are spelled', () => {
    expect(importFingerprint(ARCHIVE, {})).toBe(importFingerprint(ARCHIVE, { agent_id: undefined, environment_id: undefined }));
    expect(importFingerprint(ARCHIVE, { agent_id: 'agent_1', environment_id: 'env_1' })).toBe(importFingerprint(ARCHIVE, { environment_id: 'env_1', agent_id: 'agent_1' }));
    expect(importFingerprint(ARCHIVE, {})).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('differs with another archive, another agent or environment, or the same id named as the other target', () => {
    const prints = [
      importFingerprint(ARCHIVE, {}),
      importFingerprint('b'.repeat(64), {}),
      importFingerprint(ARCHIVE, { agent_id: 'agent_1' }),
      importFingerprint(ARCHIVE, { agent_id: 'agent_2' }),
      importFingerprint(ARCHIVE, { environment_id: 'env_1' }),
      importFingerprint(ARCHIVE, { agent_id: 'agent_1', environment_id: 'env_1' }),
      importFingerprint(ARCHIVE, { agent_id: 'x' }),
      importFingerprint(ARCHIVE, { environment_id: 'x' }),
    ];
    expect(new Set(prints).size).toBe(prints.length);
  });
});

describe('ids an import names from its key', () => {
  it('are the same for the same owner and key, and differ for another owner or key', () => {
    for (const ids of [
      (owner: string, key: string) => IdempotentImportIds.agent(owner, key),
      (owner: string, key: string) => IdempotentImportIds.environment(owner, key),
      (owner: string, key: string) => IdempotentImportIds.file(owner, key, 0),
      (owner: string, key: string) => IdempotentCommandIds.import(owner, key),
    ]) {
      expect(ids('owner_1', 'k')).toBe(ids('owner_1', 'k'));
      expect(new Set([ids('owner_1', 'k'), ids('owner_2', 'k'), ids('owner_1', 'k2')]).size).toBe(3);
    }
  });

  it('carry the prefix of what they name, one file id per output, and never a create’s command id under the same key', () => {
    expect(IdempotentImportIds.agent('o', 'k')).toMatch(/^agent_/);
    expect(IdempotentImportIds.environment('o', 'k')).toMatch(/^env_/);
    expect(IdempotentImportIds.file('o', 'k', 0)).toMatch(/^file_/);
    expect(IdempotentImportIds.file('o', 'k', 0)).not.toBe(IdempotentImportIds.file('o', 'k', 1));
    expect(IdempotentCommandIds.import('o', 'k')).not.toBe(IdempotentCommandIds.create('o', 'k'));
  });

  it('are claimed in a slot no create key (printable ASCII) or events key reaches', () => {
    expect(importKeySlot('k')).not.toBe('k');
    expect(importKeySlot('k')).toMatch(/\u0000/);
    expect(importKeySlot('k')).not.toBe(eventsKeySlot('sesn_1', 'k'));
  });
});

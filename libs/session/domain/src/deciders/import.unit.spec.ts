import { DeciderSpec } from '@berth/core/testing';
import { toPublicEvent, type ImportOrigin } from '@berth/contracts';
import { sessionDecider } from '../decide';
import { deriveSessionView } from '../read/session-view';
import { Cmd, historyOf, stateOf } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);

const origin: ImportOrigin = {
  session_id: 'sesn_src',
  agent: { id: 'agent_src', version: 3 },
  environment_id: 'env_src',
  exported_at: '2026-12-02T04:00:00.000Z',
  journal_events: 42,
  harness_session_id: 'hs_src',
  files: [{ from: 'file_src', to: 'file_new' }],
  workspace_blob: 'blob_ws',
  resources_not_carried: [{ type: 'github_repository', id: 'sesrsc_src', url: 'https://github.com/acme/app.git', checkout: null, mount_path: '/workspace/app' }],
};

describe('CreateSession of an import', () => {
  it('records where it came from after SessionCreated; the next turn resumes the archived harness conversation', () => {
    spec
      .given([])
      .when(Cmd.create({ import: origin }))
      .thenMatches([{ type: 'SessionCreated' }, { type: 'SessionImported', data: { from: origin } }, { type: 'SandboxRequested', data: { generation: 1, reason: 'startup' } }] as never);
    const state = stateOf(Cmd.create({ import: origin }));
    expect(state).toMatchObject({ imported_from: origin, harness_session_id: 'hs_src', forked_from: null });
    expect(deriveSessionView(state)).toMatchObject({
      harness: { session_id: 'hs_src' },
      imported_from: { session_id: 'sesn_src', agent: { id: 'agent_src', version: 3 }, environment_id: 'env_src', exported_at: origin.exported_at, resources_not_carried: origin.resources_not_carried },
    });
  });

  it('renders as berth.session_imported with the source ids, the file mapping and the resources not carried, never the blob key', () => {
    const imported = historyOf(Cmd.create({ import: origin })).find((e) => e.type === 'SessionImported');
    if (imported === undefined) throw new Error('no SessionImported');
    const rendered = toPublicEvent(imported);
    expect(rendered).toMatchObject({
      type: 'berth.session_imported',
      from_session_id: 'sesn_src',
      from_agent: { id: 'agent_src', version: 3 },
      from_environment_id: 'env_src',
      journal_events: 42,
      files: [{ from: 'file_src', to: 'file_new' }],
      workspace: true,
      resources_not_carried: origin.resources_not_carried,
    });
    expect(JSON.stringify(rendered)).not.toContain('blob_ws');
  });

  it('a plain create records no import', () => {
    expect(historyOf(Cmd.create()).map((e) => e.type)).not.toContain('SessionImported');
    expect(deriveSessionView(stateOf(Cmd.create())).imported_from).toBeNull();
  });
});

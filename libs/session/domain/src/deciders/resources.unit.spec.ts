import { DeciderSpec } from '@berth/core/testing';
import { sessionDecider } from '../decide';
import { deriveSessionView } from '../read/session-view';
import { Cmd, historyOf, Res, stateOf } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);

describe('session resources', () => {
  it('records the resources a session is created with before its first sandbox is requested', () => {
    const file = Res.file('sesrsc_1');
    const repo = Res.repo('sesrsc_2', '/workspace/app', { type: 'branch', name: 'main' });
    spec
      .given([])
      .when(Cmd.create({ resources: [file, repo] }))
      .thenMatches([
        { type: 'SessionCreated' },
        { type: 'SessionResourceAdded', data: { resource: file } },
        { type: 'SessionResourceAdded', data: { resource: repo } },
        { type: 'SandboxRequested', data: { generation: 1, reason: 'startup' } },
      ] as never);
  });

  it('refuses to create a session whose resources share a mount path, or a path inside another', () => {
    spec.given([]).when(Cmd.create({ resources: [Res.repo('sesrsc_1', '/workspace/app'), Res.file('sesrsc_2', 'file_x', '/workspace/app/README.md')] })).thenThrows('MOUNT_PATH_CONFLICT', 409);
    spec.given([]).when(Cmd.create({ resources: [Res.file('sesrsc_1'), Res.file('sesrsc_1', 'file_y', '/home/agent/y')] })).thenThrows('VALIDATION_ERROR', 400);
  });

  it('adds a resource, idempotently on its id, and shows it in the view', () => {
    const file = Res.file('sesrsc_1');
    spec.given(historyOf(Cmd.create())).when(Cmd.addResource(file)).then([{ type: 'SessionResourceAdded', data: { resource: file } }]);
    spec.given(historyOf(Cmd.create(), Cmd.addResource(file))).when(Cmd.addResource(file)).thenNothingHappened();
    spec.given(historyOf(Cmd.create(), Cmd.addResource(file))).when(Cmd.addResource({ ...file, mount_path: '/home/agent/f' })).thenThrows('IDEMPOTENCY_KEY_CONFLICT', 409);
    expect(deriveSessionView(stateOf(Cmd.create(), Cmd.addResource(file))).resources).toEqual([file]);
  });

  it('refuses a mount path another resource holds', () => {
    spec.given(historyOf(Cmd.create(), Cmd.addResource(Res.repo('sesrsc_1', '/workspace/app')))).when(Cmd.addResource(Res.repo('sesrsc_2', '/workspace/app'))).thenThrows('MOUNT_PATH_CONFLICT', 409);
    spec.given(historyOf(Cmd.create(), Cmd.addResource(Res.repo('sesrsc_1', '/workspace/app/sub')))).when(Cmd.addResource(Res.repo('sesrsc_2', '/workspace/app'))).thenThrows('MOUNT_PATH_CONFLICT', 409);
    spec.given(historyOf(Cmd.create(), Cmd.addResource(Res.repo('sesrsc_1', '/workspace/app')))).when(Cmd.addResource(Res.repo('sesrsc_2', '/workspace/app2'))).thenMatches([{ type: 'SessionResourceAdded' }] as never);
  });

  it('removes a resource; an unknown one is a 404; the path is free again afterwards', () => {
    const repo = Res.repo('sesrsc_1');
    spec.given(historyOf(Cmd.create(), Cmd.addResource(repo))).when(Cmd.removeResource('sesrsc_1')).then([{ type: 'SessionResourceRemoved', data: { resource_id: 'sesrsc_1' } }]);
    spec.given(historyOf(Cmd.create())).when(Cmd.removeResource('sesrsc_9')).thenThrows('RESOURCE_NOT_FOUND', 404);
    expect(stateOf(Cmd.create(), Cmd.addResource(repo), Cmd.removeResource('sesrsc_1')).resources).toEqual([]);
    spec.given(historyOf(Cmd.create(), Cmd.addResource(repo), Cmd.removeResource('sesrsc_1'))).when(Cmd.addResource(Res.repo('sesrsc_2'))).thenMatches([{ type: 'SessionResourceAdded' }] as never);
  });

  it('refuses resources on a deleted session, accepts them on a terminated one', () => {
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.addResource(Res.file('sesrsc_1'))).thenThrows('AGENT_RUNTIME_ERROR', 409);
    spec.given(historyOf(Cmd.create(), Cmd.bind(), Cmd.terminate())).when(Cmd.addResource(Res.file('sesrsc_1'))).thenMatches([{ type: 'SessionResourceAdded' }] as never);
  });
});

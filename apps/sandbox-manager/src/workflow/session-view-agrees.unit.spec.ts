import type { CommandData, CommandType, RecordedEvent } from '@berth/contracts';
import { commandFor, createSessionData } from '@berth/contracts/testing';
import { FixedClock } from '@berth/core/testing';
import { emptySessionView, foldSessionEvent, SESSION_VIEW_EVENT_TYPES, type SessionView } from '@berth/sandbox-workflow';
import { evolve, initialState, type SessionState } from '@berth/session-domain';
import { createSessionKernel } from '@berth/session-kernel';
import { MemoryStore } from '@berth/testing';
import fc from 'fast-check';

const SID = 'sesn_view';

/** The fields the manager's view keeps, as the kernel's own state has them. */
function expectedView(state: SessionState): Omit<SessionView, 'session_id' | 'last_seq' | 'turn'> & { turn: unknown } {
  const turn = state.current_turn;
  return {
    exists: state.exists,
    owner_id: state.owner_id,
    environment_id: state.environment_id,
    agent: state.agent,
    harness: state.harness,
    permission_mode: state.permission_mode,
    paused: state.paused,
    lifecycle: state.lifecycle === 'TERMINATED' ? 'terminated' : state.lifecycle === 'DELETED' ? 'deleted' : 'open',
    sandbox: state.sandbox !== null && !state.runtime_unavailable ? state.sandbox : null,
    sandbox_request: state.sandbox_request?.generation ?? null,
    harness_session_id: state.harness_session_id,
    resources: state.resources,
    vault_ids: state.vault_ids,
    forked_from: state.forked_from === null ? null : { session_id: state.forked_from.session_id, turn_id: state.forked_from.turn_id },
    import_workspace: state.imported_from?.workspace_blob ?? null,
    turn: turn === null ? null : { turn_id: turn.id, interrupting: turn.status === 'INTERRUPTING', pending: turn.pending_confirmations, harness_released: turn.harness_released },
    prompts: Object.fromEntries([...(turn === null ? [] : [turn.id]), ...state.queued.map((q) => q.turn_id)].map((id) => [id, expect.anything()])),
  };
}

const weighted = (weight: number, ...names: string[]) => ({ weight, arbitrary: fc.constantFrom(...names) });
// Commands that end a session are rare, or most journals would stop early.
const step = fc.record({
  name: fc.oneof(
    weighted(6, 'message', 'bind', 'ask', 'confirm', 'interrupt'),
    weighted(3, 'output', 'complete', 'fail', 'died', 'recover', 'addResource', 'removeResource'),
    weighted(2, 'pause', 'resume'),
    weighted(1, 'startFailed', 'endConversation', 'permission', 'terminate', 'archive', 'delete'),
  ),
  n: fc.nat(5),
});

describe('the sandbox-manager view agrees with the kernel (property: random journals from the real kernel)', () => {
  it('on every field it keeps, after every command', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        const store = new MemoryStore();
        const kernel = createSessionKernel({ journal: store.journal, snapshots: store.snapshots, clock: new FixedClock() });
        let i = 0;
        const run = <T extends CommandType>(type: T, data: CommandData<T>) => kernel.execute(commandFor(type, SID, data, { command_id: `cmd_p${i++}` }));
        // A third of the journals are of a fork, a third of an import (their harness conversation and origin come from SessionForked / SessionImported).
        const fork = { session_id: 'sesn_origin', turn_id: 'turn_origin', event_id: 'sevt_o_0', seq: 3, harness_session_id: 'h_origin' };
        const imported = {
          session_id: 'sesn_src',
          agent: { id: 'agent_src', version: 2 },
          environment_id: 'env_src',
          exported_at: '2026-01-01T00:00:00.000Z',
          journal_events: 9,
          harness_session_id: 'h_imported',
          files: [{ from: 'file_src', to: 'file_new' }],
          workspace_blob: 'blob_import_1',
          resources_not_carried: [],
        };
        const origin = [{}, { fork }, { import: imported }][steps.length % 3];
        await run('CreateSession', createSessionData({ permission_mode: 'always_ask', ...origin }));
        for (const { name, n } of steps) {
          const events = await store.journal.readEvents(SID);
          const state = events.reduce<SessionState>(evolve, initialState());
          const turn = state.current_turn?.id ?? `turn_${n}`;
          const generation = state.sandbox?.generation ?? state.sandbox_request?.generation ?? 1;
          switch (name) {
            case 'message':
              await run('SubmitUserMessage', { turn_id: `turn_${i}`, content: [{ type: 'text', text: `m${n}` }] });
              break;
            case 'bind':
              await run('BindSandbox', {
                sandbox_id: `sbx_${generation}`,
                generation,
                expires_at: n % 2 === 0 ? null : '2026-01-02T00:00:00.000Z',
                warm: false,
                ...(n % 3 !== 0 && { lease: { idle_timeout_seconds: 60 * n, max_expires_at: n % 2 === 0 ? null : '2026-01-01T00:03:00.000Z' } }),
              });
              break;
            case 'output':
            case 'ask':
              await run('RecordAgentOutput', {
                turn_id: turn,
                generation,
                offset: (state.current_turn?.last_offset ?? -1) + 1,
                outputs: [{ kind: 'tool_use', tool_use_id: `toolu_${i}`, name: 'Bash', input: {}, needs_confirmation: name === 'ask' }],
                harness_session_id: `h_${n}`,
              });
              break;
            case 'confirm': {
              const pending = state.current_turn?.pending_confirmations[0];
              if (pending !== undefined) await run('ConfirmToolUse', { tool_use_id: pending, result: n % 2 === 0 ? 'allow' : 'deny', deny_message: null });
              break;
            }
            case 'complete':
              await run('CompleteTurn', {
                turn_id: turn,
                generation,
                interrupted: n % 2 === 0,
                harness_session_id: null,
                ...(n % 3 === 0 ? { checkpoint: { transcript: [{ path: '/t.jsonl', bytes: n }], workspace: { bytes: n, files: 1 }, dropped_turn_ids: [] } } : {}),
              });
              break;
            case 'fail':
              await run('FailTurn', { turn_id: turn, reason: 'harness_failed', message: 'x' });
              break;
            case 'interrupt':
              await run('InterruptTurn', {});
              break;
            case 'died':
              await run('ReportSandboxDied', { sandbox_id: `sbx_${generation}`, generation, cause: 'die', exit_code: 137 });
              break;
            case 'startFailed':
              await run('ReportSandboxStartFailed', { generation, message: 'no image' });
              break;
            case 'terminate':
              await run('TerminateSession', {});
              break;
            case 'archive':
              await run('ArchiveSession', {});
              break;
            case 'recover':
              await run('RecoverSession', { probe: { exists: n % 2 === 0, running: n % 2 === 0, expiry_known: true, expired: false } });
              break;
            case 'endConversation':
              await run('EndConversation', {});
              break;
            case 'permission':
              await run('SetPermissionMode', { mode: n % 2 === 0 ? 'always_allow' : 'always_ask' });
              break;
            case 'delete':
              await run('DeleteSession', {});
              break;
            case 'addResource':
              // The same id twice replaces the resource (a new mount path).
              await run('AddSessionResource', {
                resource: { type: 'file', id: `sesrsc_${n % 3}`, file_id: `file_${n}`, mount_path: `/mnt/session/uploads/f${i}.txt`, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' },
              });
              break;
            case 'removeResource':
              await run('RemoveSessionResource', { resource_id: `sesrsc_${n % 3}` });
              break;
            case 'pause':
              await run('PauseSession', {});
              break;
            case 'resume':
              await run('ResumeSession', {});
              break;
          }
          const journal: RecordedEvent[] = await store.journal.readEvents(SID);
          const kernelState = journal.reduce<SessionState>(evolve, initialState());
          const folded = (await store.journal.readEvents(SID, { types: SESSION_VIEW_EVENT_TYPES })).reduce(foldSessionEvent, emptySessionView());
          expect(folded).toMatchObject(expectedView(kernelState));
          expect(Object.keys(folded.prompts).sort()).toEqual(Object.keys(expectedView(kernelState).prompts).sort());
          for (const [eventId, harnessId] of Object.entries(folded.turn?.asks ?? {})) expect(kernelState.current_turn?.tool_use_event_ids[harnessId]).toBe(eventId);
        }
      }),
      {
        numRuns: 200,
        // Stories random draws rarely reach: an interrupt while a tool use waits, then its confirmation; a rebuild after a loss.
        examples: [
          [['bind', 'message', 'ask', 'interrupt', 'confirm', 'complete'].map((name) => ({ name, n: 1 }))],
          [['bind', 'message', 'died', 'message', 'bind', 'ask', 'recover', 'terminate', 'recover', 'message'].map((name) => ({ name, n: 2 }))],
        ],
      },
    );
  });
});

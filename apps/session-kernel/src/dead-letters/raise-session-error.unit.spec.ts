import { FixedClock } from '@berth/core/testing';
import type { DeadLetter } from '@berth/nats';
import { sessionErrorForDeadLetter } from './raise-session-error';

const clock = new FixedClock();
const deadLetter = (over: Partial<DeadLetter>): DeadLetter => ({
  subject: 'session.sesn_1.cmd.SubmitUserMessage',
  deadLetterSubject: 'dlq.session.sesn_1.cmd.SubmitUserMessage',
  body: { meta: { command_id: 'cmd_abc' } },
  headers: {},
  reason: 'VALIDATION_ERROR: data.content: Too small',
  deliveryCount: 1,
  streamSeq: 42,
  ...over,
});

describe('sessionErrorForDeadLetter', () => {
  it('tells the session, with an id derived from the dead command so a repeat adds one error', () => {
    const command = sessionErrorForDeadLetter(deadLetter({}), clock);
    expect(command).toMatchObject({
      type: 'RaiseSessionError',
      data: { error_type: 'command_dead_lettered', retry_status: 'exhausted' },
      meta: { command_id: 'dlq_cmd_abc', session_id: 'sesn_1', actor: 'session-kernel' },
    });
    expect(command?.type === 'RaiseSessionError' && command.data.message).toContain('SubmitUserMessage could not be processed after 1 attempt(s)');
  });

  it('falls back to the stream sequence when the body named no usable command id', () => {
    expect(sessionErrorForDeadLetter(deadLetter({ body: null }), clock)?.meta.command_id).toBe('dlq_seq42');
  });

  it('raises nothing for a dead-lettered session error (no loop) or a subject without a session', () => {
    expect(sessionErrorForDeadLetter(deadLetter({ subject: 'session.sesn_1.cmd.RaiseSessionError' }), clock)).toBeNull();
    expect(sessionErrorForDeadLetter(deadLetter({ subject: 'elsewhere' }), clock)).toBeNull();
  });
});

import { ValidationError } from '@berth/core';
import { COMMAND_TYPES, EVENT_TYPES, PUBLIC_EVENT_TYPES, Streams, Subjects, parseCommand, parseSessionSubject, toPublicEvent } from './index';

const meta = { command_id: 'cmd_1', session_id: 'sesn_1', actor: 'owner_1', issued_at: '2026-01-01T00:00:00.000Z' };

describe('subjects', () => {
  it('builds command and event subjects from validated ids', () => {
    expect(Subjects.command('sesn_1', 'SubmitUserMessage')).toBe('session.sesn_1.cmd.SubmitUserMessage');
    expect(Subjects.event('sesn_1', 'owner_1', 'TurnStarted')).toBe('session.sesn_1.evt.owner_1.TurnStarted');
    expect(parseSessionSubject('session.sesn_1.evt.owner_1.TurnStarted')).toEqual({ sessionId: 'sesn_1', kind: 'evt', type: 'TurnStarted', ownerId: 'owner_1' });
    expect(parseSessionSubject('session.sesn_1.cmd.InterruptTurn')).toEqual({ sessionId: 'sesn_1', kind: 'cmd', type: 'InterruptTurn', ownerId: null });
  });

  it('still reads event subjects published before the owner token, and every old filter still matches the new ones', () => {
    expect(parseSessionSubject('session.sesn_1.evt.TurnStarted')).toEqual({ sessionId: 'sesn_1', kind: 'evt', type: 'TurnStarted', ownerId: null });
    expect(parseSessionSubject('session.sesn_1.cmd.owner_1.TurnStarted')).toBeNull();
    expect(parseSessionSubject('session.sesn_1.evt.a.b.TurnStarted')).toBeNull();
    const matches = (filter: string, subject: string) => {
      const f = filter.split('.');
      const s = subject.split('.');
      return f.every((t, i) => t === '>' || (i < s.length && (t === '*' || t === s[i]))) && (f[f.length - 1] === '>' ? s.length >= f.length : s.length === f.length);
    };
    const created = Subjects.event('sesn_1', 'owner_1', 'TurnStarted');
    for (const filter of [Subjects.allEvents, Subjects.sessionEvents('sesn_1'), Subjects.session('sesn_1'), Subjects.eventsOfType('TurnStarted'), Subjects.ownerEvents('owner_1')]) {
      expect(matches(filter, created)).toBe(true);
    }
    expect(matches(Subjects.ownerEvents('owner_2'), created)).toBe(false);
    expect(matches(Subjects.allEvents, 'session.sesn_1.evt.TurnStarted')).toBe(true);
    expect(matches(Subjects.legacyEventsOfType('TurnStarted'), 'session.sesn_1.evt.TurnStarted')).toBe(true);
    expect(matches(Subjects.allCommands, created)).toBe(false);
  });

  it('refuses an id that would break the subject', () => {
    expect(() => Subjects.command('a.b', 'DeleteSession')).toThrow(ValidationError);
    expect(() => Subjects.event('*', 'owner_1', 'TurnStarted')).toThrow(ValidationError);
    expect(() => Subjects.event('x y', 'owner_1', 'TurnStarted')).toThrow(ValidationError);
    expect(() => Subjects.event('sesn_1', 'a.b', 'TurnStarted')).toThrow(ValidationError);
    expect(() => Subjects.ownerEvents('>')).toThrow(ValidationError);
    expect(() => Streams.ownerEvents('a b')).toThrow(ValidationError);
  });

  it('uses type names that are valid subject tokens', () => {
    for (const t of [...COMMAND_TYPES, ...EVENT_TYPES]) expect(t).toMatch(/^[A-Za-z]+$/);
  });
});

describe('parseCommand', () => {
  it('accepts a well-formed command and fills defaults', () => {
    const cmd = parseCommand({ type: 'ConfirmToolUse', meta, data: { tool_use_id: 'sevt_1', result: 'allow' } });
    expect(cmd).toEqual({ type: 'ConfirmToolUse', meta, data: { tool_use_id: 'sevt_1', result: 'allow', deny_message: null } });
  });

  it.each([
    [{ type: 'Nope', meta, data: {} }, 'type'],
    [{ type: 'SubmitUserMessage', meta, data: { turn_id: 'turn_1', content: [] } }, 'data.content'],
    [{ type: 'SubmitUserMessage', meta, data: { turn_id: 'turn 1', content: [{ type: 'text', text: 'hi' }] } }, 'data.turn_id'],
    [{ type: 'InterruptTurn', meta: { ...meta, session_id: 'a.b' }, data: {} }, 'meta.session_id'],
    [{ type: 'ConfirmToolUse', meta, data: { tool_use_id: 'sevt_1', result: 'maybe' } }, 'data.result'],
  ])('rejects bad input naming the field (%#)', (input, field) => {
    let caught: unknown;
    try {
      parseCommand(input);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).field).toBe(field);
    expect((caught as ValidationError).message).toContain(field);
  });
});

describe('public events', () => {
  it('renders every domain event type to a public type', () => {
    for (const t of EVENT_TYPES) expect(PUBLIC_EVENT_TYPES[t]).toMatch(/^(user|agent|session|berth)\./);
  });

  it('renders a completed turn as idle with end_turn', () => {
    const e = toPublicEvent({
      type: 'TurnCompleted',
      data: { turn_id: 'turn_1', interrupted: true },
      id: 'sevt_x_0',
      session_id: 'sesn_1',
      seq: 7,
      schema_version: 1,
      command_id: 'cmd_x',
      occurred_at: '2026-01-01T00:00:00.000Z',
    });
    expect(e).toEqual({ id: 'sevt_x_0', type: 'session.status_idle', processed_at: '2026-01-01T00:00:00.000Z', stop_reason: { type: 'end_turn' } });
  });
});

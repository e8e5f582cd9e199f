import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createLogger } from './create-logger';

function capture() {
  const lines: string[] = [];
  return { lines, destination: { write: (line: string) => lines.push(line) }, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('service logger', () => {
  it('writes one JSON object per line with time, level, service, message and the fields', () => {
    const out = capture();
    const { log } = createLogger({ service: 'session-kernel', format: 'json', destination: out.destination, env: {} });
    log.info('command applied', { session_id: 'sesn_1', command_id: 'cmd_1' });
    log.child({ session_id: 'sesn_2', turn_id: 'turn_9' }).warn('turn failed', { err: new Error('boom\nsecond line') });
    expect(out.lines).toHaveLength(2);
    for (const line of out.lines) expect(line.trimEnd().split('\n')).toHaveLength(1);
    const [first, second] = out.parsed();
    expect(first).toMatchObject({ level: 'info', service: 'session-kernel', msg: 'command applied', session_id: 'sesn_1', command_id: 'cmd_1' });
    expect(new Date(first.time as string).toISOString()).toBe(first.time);
    expect(second).toMatchObject({ level: 'warn', session_id: 'sesn_2', turn_id: 'turn_9', err: { type: 'Error', message: 'boom\nsecond line' } });
  });

  it('never writes a secret of its environment or a key-shaped string', () => {
    const out = capture();
    const { log } = createLogger({ service: 'sandbox-manager', format: 'json', destination: out.destination, env: { BERTH_MODEL_API_KEY: 'sk-live-model-key-xyz-0001' } });
    log.error('model refused sk-live-model-key-xyz-0001', { headers: { 'x-api-key': 'bk_abcdefghij12_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345' } });
    expect(out.lines.join('')).not.toContain('sk-live-model-key-xyz-0001');
    expect(out.lines.join('')).not.toContain('ABCDEFGHIJKLMNOPQRSTUVWXYZ012345');
  });

  it('respects the level', () => {
    const out = capture();
    const { log } = createLogger({ service: 'gateway', level: 'warn', format: 'json', destination: out.destination, env: {} });
    log.debug('noise');
    log.info('noise');
    log.warn('kept');
    expect(out.parsed().map((l) => l.msg)).toEqual(['kept']);
  });

  it('carries the active span ids so a line can be found from its trace', () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    const out = capture();
    const { log } = createLogger({ service: 'gateway', format: 'json', destination: out.destination, env: {} });
    const span = trace.wrapSpanContext({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 });
    context.with(trace.setSpan(context.active(), span), () => log.info('inside'));
    log.info('outside');
    const [inside, outside] = out.parsed();
    expect(inside).toMatchObject({ trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' });
    expect(outside.trace_id).toBeUndefined();
    context.disable();
  });
});

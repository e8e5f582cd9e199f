import { ErrorCodes, isUnreachable } from '@berth/core';
import { engineError } from './docker-errors';

const systemError = (code: string, syscall: string) => Object.assign(new Error(`${syscall} ${code} /run/docker.sock`), { code, syscall });

describe('engineError', () => {
  it('codes an engine that did not answer UNREACHABLE (worth waiting for)', () => {
    for (const error of [systemError('ENOENT', 'connect'), systemError('ECONNREFUSED', 'connect'), systemError('ECONNRESET', 'read')]) {
      const coded = engineError('inspect', 'box', error);
      expect(coded).toMatchObject({ code: ErrorCodes.UNREACHABLE, status: 503 });
      expect(isUnreachable(coded)).toBe(true);
    }
  });

  it('codes an answer that said no UNAVAILABLE, however it was worded', () => {
    const refused = Object.assign(new Error('(HTTP code 500) server error - failed to set up container networking: ECONNREFUSED'), { statusCode: 500 });
    expect(engineError('start', 'box', refused)).toMatchObject({ code: ErrorCodes.UNAVAILABLE, details: { engineStatus: 500 } });
    // A missing file is not a missing engine.
    expect(isUnreachable(engineError('put archive', 'box', systemError('ENOENT', 'open')))).toBe(false);
  });
});

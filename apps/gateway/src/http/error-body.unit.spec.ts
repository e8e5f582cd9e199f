import { NotFoundException } from '@nestjs/common';
import { BerthError, NotFoundError, ValidationError } from '@berth/core';
import { renderError } from './error-body';

describe('every failure renders as an Anthropic-style error', () => {
  it('keeps a coded error’s status, code and details', () => {
    expect(renderError(new ValidationError('model: required', 'model'))).toEqual({
      status: 400,
      unexpected: false,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'model: required', code: 'VALIDATION_ERROR', details: { field: 'model' } } },
    });
    expect(renderError(new NotFoundError('session not found', 'SESSION_NOT_FOUND')).body.error).toEqual({ type: 'not_found_error', message: 'session not found', code: 'SESSION_NOT_FOUND' });
    expect(renderError(new BerthError('TIMEOUT', 504, 'slow')).body.error.type).toBe('timeout_error');
  });

  it('renders body-parser failures as 4xx', () => {
    expect(renderError(Object.assign(new Error('x'), { status: 400, type: 'entity.parse.failed' }))).toMatchObject({ status: 400, body: { error: { code: 'INVALID_BODY' } } });
    expect(renderError(Object.assign(new Error('x'), { status: 413, type: 'entity.too.large' }))).toMatchObject({ status: 413, body: { error: { type: 'request_too_large', code: 'PAYLOAD_TOO_LARGE' } } });
    expect(renderError(Object.assign(new Error('incorrect header check'), { status: 400, code: 'Z_DATA_ERROR' }))).toMatchObject({ status: 400, unexpected: false });
  });

  it('answers a store that cannot take the request now (locked, disk full) 503 UNAVAILABLE, to be retried', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_FULL', 'SQLITE_IOERR_WRITE']) {
      expect(renderError(Object.assign(new Error('database or disk is full'), { code }))).toMatchObject({
        status: 503,
        unexpected: false,
        body: { error: { type: 'api_error', code: 'UNAVAILABLE', message: 'the store is unavailable right now; retry the request' } },
      });
    }
    expect(renderError(Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })).status).toBe(500);
  });

  it('hides the cause of anything unexpected', () => {
    const rendered = renderError(new TypeError('secret internals at /srv/app.js:10'));
    expect(rendered).toEqual({ status: 500, unexpected: true, body: { type: 'error', error: { type: 'api_error', message: 'internal server error', code: 'INTERNAL' } } });
    expect(renderError(new NotFoundException()).body.error).toMatchObject({ type: 'not_found_error', code: 'NOT_FOUND' });
  });
});

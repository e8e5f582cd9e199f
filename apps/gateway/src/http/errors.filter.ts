import type { Logger } from '@berth/ports';
import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { renderError } from './error-body';

/** The one place an error becomes an HTTP response. */
@Catch()
export class ErrorsFilter implements ExceptionFilter {
  constructor(private readonly log: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const rendered = renderError(exception);
    if (rendered.unexpected) this.log.error('unexpected error answering a request', { err: exception, path: host.switchToHttp().getRequest<{ path?: string }>().path });
    else if (rendered.storeUnavailable) this.log.warn('store unavailable', { err: exception });
    if (res.headersSent) {
      // A stream already started: all we can do is end it.
      res.end();
      return;
    }
    res.status(rendered.status).json(rendered.body);
  }
}

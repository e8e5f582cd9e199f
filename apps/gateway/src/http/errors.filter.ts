import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { renderError } from './error-body';

/** The one place an error becomes an HTTP response. */
@Catch()
export class ErrorsFilter implements ExceptionFilter {
  private readonly logger = new Logger('gateway');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const rendered = renderError(exception);
    if (rendered.unexpected) this.logger.error(exception instanceof Error ? exception.stack ?? exception.message : String(exception));
    else if (rendered.storeUnavailable) this.logger.warn(`store unavailable: ${exception instanceof Error ? exception.message : String(exception)}`);
    if (res.headersSent) {
      // A stream already started: all we can do is end it.
      res.end();
      return;
    }
    res.status(rendered.status).json(rendered.body);
  }
}

import { Catch, type RpcExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';

/**
 * Nest's default RPC filter turns every unknown error into `{status:'error'}`, which would hide a
 * 4xx BerthError from the transport. This filter passes the original error through, so the
 * consumer runner can classify it (bad input → dead-letter, anything else → retry).
 */
@Catch()
export class JetStreamErrorsFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown): Observable<never> {
    return throwError(() => exception);
  }
}

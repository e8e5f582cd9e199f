import type { ErrorRequestHandler, RequestHandler } from 'express';
import { json } from 'express';
import { renderError } from './error-body';

/** JSON bodies up to `limit`; anything else is left unparsed (and then fails its route's schema). */
export const jsonBody = (limit: string | number): RequestHandler => json({ limit, strict: false, type: ['application/json', 'application/*+json'] });

/** Body-parser failures (malformed JSON → 400, too large → 413) rendered like every other error. */
export const bodyErrors: ErrorRequestHandler = (error, _req, res, next) => {
  if (res.headersSent) return next(error);
  const rendered = renderError(error);
  res.status(rendered.status).json(rendered.body);
};

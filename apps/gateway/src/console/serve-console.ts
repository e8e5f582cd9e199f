import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { static as serveStatic, type RequestHandler } from 'express';

/**
 * The web console's built files (apps/console/dist, built with base `/console/`), on the API's own
 * origin so the browser never needs CORS and the key stays on one origin. Paths that are not files
 * get index.html: the console routes on the client. The page is public; every API call it makes
 * carries the user's key.
 */
export function consoleHandlers(dir: string): RequestHandler[] {
  const root = resolve(dir);
  const index = join(root, 'index.html');
  return [
    serveStatic(root, { index: false, fallthrough: true, maxAge: '1h', immutable: false }),
    (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      res.setHeader('Cache-Control', 'no-cache');
      res.sendFile(index);
    },
  ];
}

export const consoleBuildExists = (dir: string): boolean => existsSync(join(resolve(dir), 'index.html'));

import { createServer } from 'node:net';

const handedOut = new Set<number>();

/**
 * A loopback port nothing listens on now (for a `host` sandbox's relay). Ports handed out by
 * this process are not handed out again, so two sandboxes started together never share one.
 */
export async function freeLoopbackPort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
      });
    });
    if (port > 0 && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

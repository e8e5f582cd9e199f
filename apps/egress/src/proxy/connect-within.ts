import { connect, type Socket } from 'node:net';

/** A TCP connection, or an error once `timeoutMs` passed without one. */
export function connectWithin(target: Readonly<{ host: string; port: number }>, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(target);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(Object.assign(new Error(`connect to ${target.host}:${target.port} timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

import { PassThrough, type Duplex } from 'node:stream';
import type { ExecHandle, ExecSpec } from '@berth/ports';
import type Docker from 'dockerode';
import { AsyncQueue, LineSplitter } from '@berth/core';

const STDERR_TAIL_BYTES = 8 * 1024;

/**
 * Runs `spec.cmd` in a container through a hijacked exec connection: stdout arrives as lines
 * (demultiplexed from stderr, whose tail is kept for error messages), stdin stays writable until
 * closed. `spec.stdin`, when given, is written and stdin closed at once.
 */
export async function startExec(docker: Docker, container: Docker.Container, spec: ExecSpec): Promise<ExecHandle> {
  const exec = await container.exec({
    Cmd: [...spec.cmd],
    Env: Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`),
    WorkingDir: spec.workdir,
    User: spec.user,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: true, Tty: false })) as unknown as Duplex;

  const lines = new AsyncQueue<string>();
  const splitter = new LineSplitter((line) => lines.push(line));
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let stderrTail = '';
  stdout.on('data', (chunk: Buffer) => splitter.write(chunk));
  stderr.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString()).slice(-STDERR_TAIL_BYTES);
  });
  docker.modem.demuxStream(stream, stdout, stderr);

  const exit = new Promise<number>((resolve, reject) => {
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      splitter.flush();
      lines.end();
      exec.inspect().then(
        (info) => resolve(info.ExitCode ?? -1),
        (error: unknown) => reject(error),
      );
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', (error: unknown) => {
      if (settled) return;
      settled = true;
      lines.fail(error);
      reject(error);
    });
  });
  // The caller may never await `exit` (e.g. it only reads lines); a rejection must not go unhandled.
  exit.catch(() => undefined);

  let stdinOpen = true;
  const handle: ExecHandle = {
    lines,
    exit,
    write(data: string) {
      if (stdinOpen) stream.write(data);
    },
    closeStdin() {
      if (!stdinOpen) return;
      stdinOpen = false;
      // Half-close: the engine closes the process's stdin and keeps streaming its output.
      stream.end();
    },
    stderrTail: () => stderrTail,
  };
  if (spec.stdin !== undefined) {
    handle.write(spec.stdin);
    handle.closeStdin();
  }
  return handle;
}

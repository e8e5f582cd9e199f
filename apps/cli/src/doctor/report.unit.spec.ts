import { renderReport } from './report';

describe('renderReport', () => {
  it('lines up one line per check and says how many failed', () => {
    const text = renderReport([
      { name: 'docker engine', ok: true, detail: 'unix:///run/berth-docker.sock (Docker 20.10.24)' },
      { name: 'nats', ok: false, detail: 'nats://127.0.0.1:4222 did not answer' },
    ]);
    expect(text.split('\n')).toEqual([
      'ok    docker engine  unix:///run/berth-docker.sock (Docker 20.10.24)',
      'FAIL  nats           nats://127.0.0.1:4222 did not answer',
      '',
      '1 of 2 checks failed.',
    ]);
  });

  it('says so when everything answers', () => {
    expect(renderReport([{ name: 'store', ok: true, detail: 'sqlite' }])).toMatch(/Everything Berth needs answers\.$/);
  });
});

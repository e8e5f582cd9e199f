import { inSeqOrderPerSession } from './outbox-order';

describe('inSeqOrderPerSession', () => {
  it("keeps the sessions' interleaving and puts each session's events in seq order", () => {
    const page = [
      { session_id: 'b', seq: 1 },
      { session_id: 'a', seq: 6 },
      { session_id: 'a', seq: 5 },
      { session_id: 'b', seq: 2 },
      { session_id: 'a', seq: 7 },
    ];
    expect(inSeqOrderPerSession(page)).toEqual([
      { session_id: 'b', seq: 1 },
      { session_id: 'a', seq: 5 },
      { session_id: 'a', seq: 6 },
      { session_id: 'b', seq: 2 },
      { session_id: 'a', seq: 7 },
    ]);
  });
});

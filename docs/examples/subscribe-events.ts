/**
 * Follows every event of your sessions over NATS and prints one line per event, resuming after the
 * last one it printed when restarted (the position is kept in a file).
 *
 *   curl -s -X POST "$BERTH_API_URL/v1/nats_credentials" -H "x-api-key: $BERTH_API_KEY" \
 *     -H 'content-type: application/json' -d '{"name":"example"}' > credential.json
 *   node -r @swc-node/register docs/examples/subscribe-events.ts credential.json position.txt
 *
 * See docs/events.md for the contract (subjects, payloads, ordering, retention).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { BerthEventSubscriber, type SubscriberCredential } from '@berth/subscriber';

async function main(): Promise<void> {
  const [credentialFile, positionFile = 'position.txt'] = process.argv.slice(2);
  if (!credentialFile) throw new Error('usage: subscribe-events.ts <credential.json> [position file]');
  const credential = JSON.parse(readFileSync(credentialFile, 'utf8')) as SubscriberCredential;
  const after = existsSync(positionFile) ? Number(readFileSync(positionFile, 'utf8')) : 0;

  const subscriber = await BerthEventSubscriber.connect(credential, { name: 'subscribe-events example' });
  process.once('SIGINT', () => void subscriber.close());
  console.error(`following ${credential.connection.stream} after position ${after} (Ctrl-C stops)`);
  for await (const { position, sessionId, seq, event } of subscriber.events({ after })) {
    console.log(`${sessionId} #${seq} ${event.type} ${event.id}`);
    // Stored after handling: a restart continues with the next event, none twice, none missed.
    writeFileSync(positionFile, String(position));
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});

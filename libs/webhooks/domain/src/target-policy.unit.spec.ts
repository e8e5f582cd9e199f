import { addressRefusal, urlRefusal } from './target-policy';

const closed = { allowPrivateTargets: false };
const open = { allowPrivateTargets: true };

describe('where webhook deliveries may go', () => {
  it.each(['127.0.0.1', '127.9.9.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1'])(
    'refuses %s unless the operator allows private targets',
    (address) => {
      expect(addressRefusal(address, closed)).toMatch(/is not a public address/);
      expect(addressRefusal(address, open)).toBeNull();
    },
  );

  it.each(['93.184.216.34', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111'])('lets public %s through', (address) => {
    expect(addressRefusal(address, closed)).toBeNull();
  });

  it('refuses a URL naming a local address or name before any lookup', () => {
    for (const url of ['http://127.0.0.1:4222/', 'http://[::1]:8080/x', 'http://localhost/h', 'https://api.localhost/', 'http://nats:4222/', 'http://metadata.google.internal/', 'http://169.254.169.254/latest/meta-data']) {
      expect(urlRefusal(url, closed)).not.toBeNull();
      expect(urlRefusal(url, open)).toBeNull();
    }
    expect(urlRefusal('https://hooks.example.com/berth', closed)).toBeNull();
  });
});

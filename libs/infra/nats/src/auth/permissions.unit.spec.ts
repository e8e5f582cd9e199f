import { COMMAND_TYPES, Streams, Subjects } from '@berth/contracts';
import { berthTopology, serviceTopology } from '../topology/topology';
import { ownerSubscriberPermissions, SERVICE_NAMES, SERVICE_USERS, servicePermissions } from './permissions';

describe('service permissions (derived from SERVICE_USERS)', () => {
  it('grants no service a wildcard over commands, events or everything', () => {
    for (const service of SERVICE_NAMES) {
      const { publish, subscribe } = servicePermissions(service);
      expect(publish).not.toContain('>');
      expect(subscribe).not.toContain('>');
      expect(publish).not.toContain(Subjects.allCommands);
      expect(subscribe).not.toContain('_INBOX.>');
    }
  });

  it('publishes each declared command on its own subject, and only the kernel publishes events', () => {
    for (const service of SERVICE_NAMES) {
      const { publish } = servicePermissions(service);
      const commands = publish.filter((s) => s.startsWith('session.*.cmd.')).map((s) => s.split('.')[3]);
      expect(commands.sort()).toEqual([...SERVICE_USERS[service].commands].sort());
      expect(publish.includes(Subjects.allEvents)).toBe(service === 'session-kernel');
    }
    for (const service of SERVICE_NAMES) for (const type of SERVICE_USERS[service].commands) expect(COMMAND_TYPES).toContain(type);
  });

  it('subscribes each service to its own inbox only', () => {
    for (const service of SERVICE_NAMES) {
      const inboxes = servicePermissions(service).subscribe.filter((s) => s.startsWith('_INBOX'));
      expect(inboxes).toEqual([`${Subjects.serviceInbox(service)}.>`]);
    }
  });

  it('declares the streams only for the kernel and each consumer only for its service', () => {
    const topology = berthTopology();
    expect(serviceTopology(topology, 'session-kernel').streams.map((s) => s.name).sort()).toEqual([Streams.commands, Streams.deadLetters, Streams.events].sort());
    expect(serviceTopology(topology, 'sandbox-manager')).toEqual({ streams: [], consumers: topology.consumers.filter((c) => ['sandbox-manager', 'sandbox-manager-turns'].includes(c.config.durable_name)) });
    expect(serviceTopology(topology, 'gateway')).toEqual({ streams: [], consumers: topology.consumers.filter((c) => c.config.durable_name === 'webhooks') });
    expect(serviceTopology(topology, 'doctor')).toEqual({ streams: [], consumers: [] });
  });
});

describe('an owner subscriber', () => {
  it("may touch only its own stream's consumers and its own inbox, and publish nothing", () => {
    const { publish, subscribe, respond } = ownerSubscriberPermissions('owner_a');
    expect(respond).toBe(false);
    expect(subscribe).toEqual(['_INBOX.owner.owner_a.>']);
    for (const subject of publish) {
      expect(subject === '$JS.API.INFO' || subject.includes('OWNER_EVT_owner_a')).toBe(true);
      expect(subject).not.toMatch(/STREAM\.(MSG|CREATE|UPDATE|DELETE|PURGE)|DIRECT/);
    }
  });
});

import { Consumers, Streams, Subjects, type CommandType, type ConsumerName } from '@berth/contracts';

/** Subject permissions of one NATS user, as they go into its user JWT (`nats.pub` / `nats.sub` / `nats.resp`). */
export type NatsPermissions = Readonly<{
  publish: readonly string[];
  subscribe: readonly string[];
  /** May answer requests it received (publish once to their reply subject), without a pub grant for it. */
  respond: boolean;
}>;

/**
 * What one Berth service does on NATS, as data: the permissions of its user follow from it
 * (`servicePermissions`). A new service (e.g. apps/egress) is one more entry in `SERVICE_USERS`.
 */
export type ServiceUser = Readonly<{
  /** Command types it publishes to SESSION_CMD. */
  commands: readonly CommandType[];
  /** Publishes events to SESSION_EVT and outcomes to the services' inboxes (only the kernel). */
  publishesEvents?: boolean;
  /** Creates and updates the streams of the topology (only the kernel). */
  managesStreams?: boolean;
  /** Looks up a session's oldest command still on SESSION_CMD, to apply one session's commands in order across replicas (only the kernel). */
  ordersCommands?: boolean;
  /** Durable consumers it declares and pulls from (stream, consumer). */
  consumes: readonly Readonly<{ stream: string; consumer: ConsumerName }>[];
  /** Reads SESSION_EVT's per-subject index (stream info with a subject filter). */
  readsEventIndex?: boolean;
  /** Core-NATS subscription to every session's events (the gateway's SSE tails). */
  tailsEvents?: boolean;
  /** Reads the info of the topology's streams, nothing else (`berth doctor`). */
  inspectsStreams?: boolean;
  /** Query responders it asks (request/reply). */
  asks: readonly QueryResponder[];
  /** Queries it answers. */
  answers: readonly QueryResponder[];
}>;

type QueryResponder = Parameters<typeof Subjects.query>[0];

export const SERVICE_USERS = {
  'session-kernel': {
    commands: [],
    publishesEvents: true,
    managesStreams: true,
    ordersCommands: true,
    consumes: [{ stream: Streams.commands, consumer: Consumers.kernel }],
    asks: [],
    answers: [],
  },
  gateway: {
    commands: ['CreateSession', 'UpdateSession', 'SubmitUserMessage', 'InterruptTurn', 'ConfirmToolUse', 'SubmitCustomToolResult', 'ArchiveSession', 'EndConversation', 'DeleteSession', 'TerminateSession', 'RecoverSession', 'PauseSession', 'ResumeSession', 'AddSessionResource', 'RemoveSessionResource', 'ForkSession'],
    // Plans webhook deliveries from every event.
    consumes: [{ stream: Streams.events, consumer: Consumers.webhooks }],
    tailsEvents: true,
    asks: ['sandbox-manager'],
    answers: [],
  },
  'sandbox-manager': {
    commands: ['BindSandbox', 'RecordAgentOutput', 'CompleteTurn', 'FailTurn', 'ReportSandboxStartFailed', 'ReportSandboxDied', 'ReportSandboxExpired', 'RaiseSessionError'],
    consumes: [
      { stream: Streams.events, consumer: Consumers.sandboxManagerControl },
      { stream: Streams.events, consumer: Consumers.sandboxManagerTurns },
    ],
    asks: [],
    answers: ['sandbox-manager'],
  },
  'turn-reconciler': {
    commands: ['RecoverTurn', 'FailTurn', 'MarkTranscriptPending'],
    consumes: [{ stream: Streams.events, consumer: Consumers.turnReconciler }],
    readsEventIndex: true,
    asks: ['sandbox-manager'],
    answers: [],
  },
  // Records the destinations it refused a sandbox (apps/egress); reads nothing from NATS.
  egress: {
    commands: ['ReportEgressDenied'],
    consumes: [],
    asks: [],
    answers: [],
  },
  // Not a service: the operator's `berth doctor`, which checks that the streams exist.
  doctor: {
    commands: [],
    consumes: [],
    inspectsStreams: true,
    asks: [],
    answers: [],
  },
} as const satisfies Record<string, ServiceUser>;

export type ServiceName = keyof typeof SERVICE_USERS;
export const SERVICE_NAMES = Object.keys(SERVICE_USERS) as ServiceName[];

/** JetStream API subjects (`$JS.API.…`), one per operation Berth grants. */
export const JsApi = {
  info: '$JS.API.INFO',
  streamInfo: (stream: string) => `$JS.API.STREAM.INFO.${stream}`,
  streamCreate: (stream: string) => `$JS.API.STREAM.CREATE.${stream}`,
  streamUpdate: (stream: string) => `$JS.API.STREAM.UPDATE.${stream}`,
  /** One stored message by sequence or by subject (the kernel's per-session order, `oldestMessageSeq`). */
  msgGet: (stream: string) => `$JS.API.STREAM.MSG.GET.${stream}`,
  consumerInfo: (stream: string, consumer: string) => `$JS.API.CONSUMER.INFO.${stream}.${consumer}`,
  /** Consumer create by name, with or without the filter subject appended (nats-server 2.9+). */
  consumerCreate: (stream: string, consumer: string) => [`$JS.API.CONSUMER.CREATE.${stream}.${consumer}`, `$JS.API.CONSUMER.CREATE.${stream}.${consumer}.>`],
  /** The pre-2.9 durable create, which clients still use when the server lacks the named form. */
  durableCreate: (stream: string, consumer: string) => `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${consumer}`,
  next: (stream: string, consumer: string) => `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
  ack: (stream: string, consumer: string) => `$JS.ACK.${stream}.${consumer}.>`,
} as const;

const consumerGrants = (stream: string, consumer: string): string[] => [
  JsApi.consumerInfo(stream, consumer),
  ...JsApi.consumerCreate(stream, consumer),
  JsApi.durableCreate(stream, consumer),
  JsApi.next(stream, consumer),
  JsApi.ack(stream, consumer),
];

const TOPOLOGY_STREAMS = [Streams.commands, Streams.events, Streams.deadLetters];

/**
 * Least privilege from the declaration: its own commands, its own consumers (and the stream info
 * it waits on), the queries it asks or answers, its own inbox. Nothing else: another service's
 * commands, events (but the kernel's), other consumers and other users' inboxes are refused.
 */
export function servicePermissions(service: ServiceName): NatsPermissions {
  const user: ServiceUser = SERVICE_USERS[service];
  const publish = new Set<string>(user.commands.map((type) => `session.*.cmd.${type}`));
  const subscribe = new Set<string>([`${Subjects.serviceInbox(service)}.>`]);
  if (user.consumes.length > 0 || user.managesStreams || user.readsEventIndex || user.inspectsStreams) publish.add(JsApi.info);
  for (const { stream, consumer } of user.consumes) {
    publish.add(JsApi.streamInfo(stream));
    for (const s of consumerGrants(stream, consumer)) publish.add(s);
    // A message that exhausts its deliveries is copied to the dead-letter stream.
    publish.add(Subjects.allDeadLetters);
  }
  if (user.managesStreams) {
    for (const stream of TOPOLOGY_STREAMS) for (const s of [JsApi.streamInfo(stream), JsApi.streamCreate(stream), JsApi.streamUpdate(stream)]) publish.add(s);
  }
  if (user.ordersCommands) publish.add(JsApi.msgGet(Streams.commands));
  if (user.publishesEvents) {
    publish.add(Subjects.allEvents);
    publish.add(Subjects.allServiceInboxes);
  }
  if (user.readsEventIndex) publish.add(JsApi.streamInfo(Streams.events));
  if (user.inspectsStreams) for (const stream of TOPOLOGY_STREAMS) publish.add(JsApi.streamInfo(stream));
  if (user.tailsEvents) subscribe.add(Subjects.allEvents);
  for (const responder of user.asks) publish.add(`${Subjects.query(responder, '*')}`);
  for (const responder of user.answers) subscribe.add(`${Subjects.query(responder, '*')}`);
  return { publish: [...publish], subscribe: [...subscribe], respond: user.answers.length > 0 };
}

/**
 * An outside subscriber of one owner (a user of the subscribers' account): read-only access to that
 * owner's stream, through pull consumers it creates (durable or ordered), and its own inbox. It can
 * publish nothing else: no commands, no other owner's stream, no stream or message APIs.
 */
export function ownerSubscriberPermissions(ownerId: string): NatsPermissions {
  const stream = Streams.ownerEvents(ownerId);
  return {
    publish: [
      JsApi.info,
      JsApi.streamInfo(stream),
      `$JS.API.CONSUMER.CREATE.${stream}`,
      `$JS.API.CONSUMER.CREATE.${stream}.>`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.*`,
      `$JS.API.CONSUMER.INFO.${stream}.*`,
      `$JS.API.CONSUMER.DELETE.${stream}.*`,
      `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
      `$JS.API.CONSUMER.NAMES.${stream}`,
      `$JS.API.CONSUMER.LIST.${stream}`,
      `$JS.ACK.${stream}.>`,
    ],
    subscribe: [`${Subjects.ownerInbox(ownerId)}.>`],
    respond: false,
  };
}

/** The gateway's user in the subscribers' account: creates and inspects the owners' streams. */
export const SUBSCRIBERS_ADMIN_PERMISSIONS: NatsPermissions = {
  publish: [JsApi.info, JsApi.streamInfo('*'), JsApi.streamCreate('*'), JsApi.streamUpdate('*')],
  subscribe: [`${Subjects.serviceInbox('subscribers-admin')}.>`],
  respond: false,
};

/** The gateway's user in the system account: pushes account JWTs (revocations) to the resolver. */
export const ACCOUNT_PUSHER_PERMISSIONS: NatsPermissions = {
  publish: ['$SYS.REQ.CLAIMS.UPDATE', '$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE'],
  subscribe: [`${Subjects.serviceInbox('account-pusher')}.>`],
  respond: false,
};

export * from './in-memory-journal';
export * from './in-memory-snapshots';
export * from './in-memory-read-model';
export * from './commands';

import type { SessionCommand } from '@berth/contracts';
import { commandFor, createSessionData } from '@berth/contracts/testing';
import { randomIds } from '@berth/core';

export const createSession = (sessionId: string, commandId?: string): SessionCommand =>
  commandFor('CreateSession', sessionId, createSessionData(), { command_id: commandId });

export const submitMessage = (sessionId: string, text: string, commandId?: string): SessionCommand =>
  commandFor('SubmitUserMessage', sessionId, { turn_id: randomIds.next('turn'), content: [{ type: 'text', text }] }, { command_id: commandId });

import { z } from 'zod';
import { SAFE_TOKEN } from '@berth/core';

/** An id that may appear in a subject or a file name. */
export const TokenSchema = z.string().regex(SAFE_TOKEN, "must be 1-128 letters, digits, '_' or '-'");
export const IsoTimeSchema = z.string().datetime({ offset: true });

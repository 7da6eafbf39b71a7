import type { FastifyReply } from 'fastify'

/**
 * Sends a JSON body that was serialised when the resource was created and stored as text, without
 * serialising it again: replays and reads are then byte-for-byte the original response.
 */
export function sendStoredJson(reply: FastifyReply, status: number, json: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .serializer((payload: unknown) => payload as string)
    .send(json)
}

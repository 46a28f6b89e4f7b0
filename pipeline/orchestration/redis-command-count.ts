/**
 * How many commands a Redis server has run since its statistics were last reset: for measuring what
 * a queued build costs Redis per dialogue (pipeline/orchestration/queued-build.test.ts and
 * queued-build.bench.ts).
 */
import type { Redis } from 'ioredis';

/** Commands a Redis server counted. */
export interface RedisCommandCounts {
  /** Commands run (`INFO stats` total_commands_processed; Redis 7 counts those its Lua scripts run too, as BullMQ's do). */
  commands: number;
  /** Calls per command summed over `INFO commandstats`. */
  calls: number;
}

/**
 * The server's command counts (both INFO replies count themselves too).
 * @throws what ioredis throws; Error when the reply has no total_commands_processed
 */
export async function readRedisCommandCounts(client: Redis): Promise<RedisCommandCounts> {
  const stats = await client.info('stats');
  const total = /total_commands_processed:(\d+)/.exec(stats)?.[1];
  if (total === undefined) throw new Error('INFO stats has no total_commands_processed');
  const commandStats = await client.info('commandstats');
  let calls = 0;
  for (const match of commandStats.matchAll(/calls=(\d+)/g)) calls += Number(match[1]);
  return { commands: Number(total), calls };
}

/** Reset the server's statistics (`CONFIG RESETSTAT`), so that the counts start from zero. @throws what ioredis throws */
export async function resetRedisCommandCounts(client: Redis): Promise<void> {
  await client.config('RESETSTAT');
}

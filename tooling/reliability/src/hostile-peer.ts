import { closeSync, ftruncateSync, openSync, readdirSync, readlinkSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { parseArgs } from 'node:util';

// A same-uid hostile peer of a host topic, as its own process (the cross-process soak's hostile mode): it
// never subscribes. `--connections` actors each loop over the attacks below, reconnecting as soon as the
// publisher dropped them, while `--truncate-every-ms` it reopens the publisher's segments through
// /proc/<pid>/fd and tries to shrink and grow them (the SIGBUS of wire version 1). It prints `started` once
// up; on SIGTERM it prints one JSON line (a HostilePeerReport) and exits 0. Plain Node, no hs import: it speaks only bytes.
//   node --import tsx src/hostile-peer.ts --socket PATH --publisher-pid PID [--connections N] [--truncate-every-ms MS]

/** The attacks, in the order each actor cycles through them. */
export const HOSTILE_ATTACKS = ['silent', 'malformed', 'partialFrame', 'reconnect'] as const;

/** What the hostile peer did, printed when it stops. */
export interface HostilePeerReport {
  /** Connections opened per attack: `silent` takes HELLO and never ATTACHes (dropped at the attach deadline), `malformed` answers HELLO with 256 bytes of garbage, `partialFrame` with 100 bytes and a FIN, `reconnect` closes at once. */
  readonly connections: Record<(typeof HOSTILE_ATTACKS)[number], number>;
  /** `ftruncate` attempts on the publisher's segments reopened through /proc, by outcome (`ok` or the errno name; sealed segments give EPERM). */
  readonly truncations: Record<string, number>;
}

const { values } = parseArgs({
  options: {
    socket: { type: 'string' },
    'publisher-pid': { type: 'string' },
    connections: { type: 'string', default: '4' },
    'truncate-every-ms': { type: 'string', default: '50' },
  },
});
const socketPath = values.socket;
const publisherPid = Number(values['publisher-pid']);
const actors = Number(values.connections);
const truncateEveryMs = Number(values['truncate-every-ms']);
if (socketPath === undefined || !Number.isSafeInteger(publisherPid) || !(actors >= 1) || !(truncateEveryMs > 0)) {
  console.error('usage: hostile-peer --socket PATH --publisher-pid PID [--connections N] [--truncate-every-ms MS]');
  process.exit(2);
}

const connections = Object.fromEntries(HOSTILE_ATTACKS.map((a) => [a, 0])) as Record<(typeof HOSTILE_ATTACKS)[number], number>;
const truncations: Record<string, number> = {};
let stopping = false;
const live = new Set<Socket>();

function attack(actor: number, round: number): void {
  if (stopping) return;
  const kind = HOSTILE_ATTACKS[(actor + round) % HOSTILE_ATTACKS.length] as (typeof HOSTILE_ATTACKS)[number];
  const socket = createConnection(socketPath as string);
  live.add(socket);
  socket.on('error', () => undefined);
  socket.on('connect', () => {
    connections[kind]++;
    if (kind === 'reconnect') socket.destroy();
  });
  socket.once('data', () => {
    // HELLO arrived (its descriptors are lost: a plain read takes no SCM_RIGHTS).
    if (kind === 'malformed') socket.write(Buffer.alloc(256, 0xa5));
    else if (kind === 'partialFrame') socket.end(Buffer.alloc(100, 0x5a));
  });
  socket.resume();
  // Dropped, refused or not up yet: the next attack, without a pause beyond a few ms.
  socket.on('close', () => {
    live.delete(socket);
    setTimeout(() => attack(actor, round + 1), 2);
  });
}

function tryTruncate(): void {
  let entries: string[];
  try {
    entries = readdirSync(`/proc/${publisherPid}/fd`);
  } catch {
    return;
  }
  for (const entry of entries) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${publisherPid}/fd/${entry}`);
    } catch {
      continue;
    }
    if (!target.startsWith('/memfd:hs.')) continue;
    let fd: number;
    try {
      fd = openSync(`/proc/${publisherPid}/fd/${entry}`, 'r+');
    } catch {
      continue;
    }
    for (const size of [0, 1 << 30]) {
      let outcome = 'ok';
      try {
        ftruncateSync(fd, size);
      } catch (error) {
        outcome = (error as NodeJS.ErrnoException).code ?? 'unknown';
      }
      truncations[outcome] = (truncations[outcome] ?? 0) + 1;
    }
    closeSync(fd);
  }
}

// Up (its start-up, a tsx compile on a developer machine, no longer competes with the run it attacks).
console.log('started');
for (let actor = 0; actor < actors; actor++) attack(actor, 0);
const truncating = setInterval(tryTruncate, truncateEveryMs);
process.on('SIGTERM', () => {
  stopping = true;
  clearInterval(truncating);
  for (const socket of live) socket.destroy();
  const report: HostilePeerReport = { connections, truncations };
  console.log(JSON.stringify(report));
  process.exit(0);
});

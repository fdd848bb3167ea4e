/** The subjects of figure 1's rows: Herald and each baseline it is measured against. */
export const SUBJECTS = {
  herald: 'Herald POST /notify → frame',
  centrifugo: (engine: string) =>
    `baseline: Centrifugo (${engine} engine) POST /api/publish → frame`,
  socketIo: 'baseline: Socket.IO POST /push → event',
  rawWs: 'baseline: raw ws POST /push → frame',
  wsEcho: 'baseline: raw ws echo RTT',
  natsFloor: 'baseline: NATS request/reply RTT (floor)',
  designFloor: 'baseline: design floor, POST /notify → NATS → raw ws → frame',
} as const;

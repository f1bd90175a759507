/** Types for stand-in-model.mjs (plain JavaScript so that a container runs it on the Node jackin lends). */
export function startStandInModel(reply: string, port?: number): Promise<{ port: number; stop: () => Promise<void> }>;

/** The Host alias the client config names. */
export declare const SSH_TEST_HOST: 'testhost';

export interface TestSshd {
  /** The temporary directory holding keys, configs and the remote side's homes. */
  readonly dir: string;
  readonly port: number;
  /** An ssh client config: `ssh -F <clientConfig> testhost` logs in. */
  readonly clientConfig: string;
  /** The remote session's JACKIN_HOME and XDG_CACHE_HOME (both in `dir`). */
  readonly remoteJackinHome: string;
  readonly remoteCacheHome: string;
  /** How many connections sshd serves now (the listener's children: one per connection). */
  connections(): number;
  /** Kills the sshd and every connection it serves now, and what runs under them (SIGKILL, by pid). */
  kill(): Promise<void>;
  /** Starts a new sshd on the same port with the same keys (after kill()). */
  restart(): Promise<void>;
}

/**
 * Starts sshd on a free loopback port; stopped and removed when the test ends. `remotePath`: the PATH of the
 * remote sessions (a test puts a stand-in `uname` first), instead of sshd's default.
 */
export declare function startSshd(t: { after: (fn: () => void | Promise<void>) => void }, options?: { remotePath?: string }): Promise<TestSshd>;

/** The engines the tests run containers on. */
export type TestEngine = 'podman' | 'docker';
export interface TestImage {
  /** `localhost/<repo>:<content hash>` */
  ref: string;
}
/** A glibc image with bash and coreutils and no jackin, no Node. */
export declare function glibcTestImage(engine?: TestEngine): Promise<TestImage>;
/** The glibc image plus the libraries the given agent binaries link (the binaries are mounted, not copied). */
export declare function glibcAgentTestImage(engine?: TestEngine, binaries?: readonly string[]): Promise<TestImage>;
/** The glibc image plus Debian's perl-base, as most real images have it: `attach-proxy` then runs on perl. */
export declare function glibcPerlTestImage(engine?: TestEngine): Promise<TestImage>;
/** An image of busybox-static alone (no C library, no loader, no Node, no perl); every applet links to /bin/busybox. */
export declare function busyboxTestImage(engine?: TestEngine): Promise<TestImage>;
/**
 * An arm64 image (recorded as arm64) of Debian's arm64 busybox-static, glibc and libstdc++, no Node, no
 * jackin; built from the .debs scripts/setup-arm64.sh caches. Runs on x64 through qemu (assertArm64Emulation).
 */
export declare function arm64TestImage(engine?: TestEngine): Promise<TestImage>;
/** Throws, naming scripts/setup-arm64.sh, unless qemu-aarch64 is registered with binfmt_misc with the F flag. */
export declare function assertArm64Emulation(): void;
/** A container name unique to this test run, with the branch-neutral prefix tests clean up by. */
export declare function containerName(label: string): string;
/** Removes a container a test started, by its exact name; a container already gone is fine. */
export declare function removeContainer(name: string, engine?: TestEngine): Promise<void>;
/** A container name for one test (containerName), whose container is removed when the test ends, whatever happened. */
export declare function testContainer(t: { after: (fn: () => unknown) => void }, label: string, engine?: TestEngine): string;

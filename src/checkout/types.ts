/**
 * What a copy-on-write checkout records on its task (`task.data.checkout`), before its mount is
 * made: removal, gc and crash recovery find the mount from it.
 */
export interface CheckoutFacts {
  mode: 'cow';
  /** The base commit the snapshot holds. */
  commit: string;
  /** The shared, immutable snapshot (overlay's lower layer). */
  lower: string;
  /** This workspace's private layer, and overlay's work folder beside it. */
  upper: string;
  work: string;
  /** Mounted by fuse-overlayfs (not root) rather than the kernel's overlay. */
  fuse?: boolean;
}

/** A structurally valid PNG of about `size` bytes (a few hundred over) with random pixel data; see png.mjs. */
export declare function bigPng(size: number): Buffer;

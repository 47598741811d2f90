/* Hex and hash formatting shared by the IR, the loader and the tools (pto/base.h). */
#include <xxhash.h>

#include "pto/base.h"

#define FNV64_OFFSET_BASIS 0xcbf29ce484222325ull
#define FNV64_PRIME 0x100000001b3ull

void pto_hash_hex(const uint8_t *bytes, size_t len, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < len; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * len] = 0;
}

uint64_t pto_hash_fnv1a64(const uint8_t *data, size_t len) {
  uint64_t h = FNV64_OFFSET_BASIS;
  for (size_t i = 0; i < len; i++) {
    h ^= data[i];
    h *= FNV64_PRIME;
  }
  return h;
}

void pto_hash_xxh128_hex(const void *data, size_t len, char out_hex[33]) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
  pto_hash_hex(c.digest, sizeof c.digest, out_hex);
}

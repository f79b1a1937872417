/// \file
/// SHA-256 (FIPS 180-4), for the build cache's keys and the tasklet check's memory: incremental
/// (`update` as often as needed, then `hex_digest`) or of one string (`sha256_hex`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sdfc {

class Sha256 {
 public:
  void update(std::string_view data);
  /// Pads, finishes and returns the digest in lower-case hex; the object is spent afterwards.
  std::string hex_digest();

 private:
  void compress(const unsigned char* block);

  uint32_t state_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

/// Hex SHA-256 (lower case) of a byte string.
std::string sha256_hex(std::string_view data);

}  // namespace sdfc

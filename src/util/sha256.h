// File: sha256.h
//
// SHA-256 as lowercase hex, over OpenSSL's libcrypto. Thread-safe.

#ifndef BATON_SRC_UTIL_SHA256_H_
#define BATON_SRC_UTIL_SHA256_H_

#include <string>
#include <string_view>

namespace baton {

// Hex digest of "data" (64 characters).
std::string Sha256Hex(std::string_view data);

// The same over data that arrives in pieces (a file streamed through).
class Sha256Stream {
 public:
  Sha256Stream();
  void Add(std::string_view data);
  std::string HexDigest();  // once, after the last Add

 private:
  // OpenSSL's SHA256_CTX, kept opaque here: 112 bytes, 8-aligned.
  alignas(8) unsigned char ctx_[112];
};

}  // namespace baton

#endif  // BATON_SRC_UTIL_SHA256_H_

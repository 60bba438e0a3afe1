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

}  // namespace baton

#endif  // BATON_SRC_UTIL_SHA256_H_

#include "util/sha256.h"

// SHA256_Init and friends are deprecated in OpenSSL 3 in favour of EVP, but
// EVP's first use initialises libcrypto's providers (reads openssl.cnf,
// builds the algorithm tables): 3 M instructions, a tenth of a one-shot
// `baton` command's CPU, for an algorithm that never changes. The low-level
// functions run the same assembly without that (issue 21 item 4).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace baton {

namespace {

std::string Hex(const unsigned char (&digest)[SHA256_DIGEST_LENGTH]) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * SHA256_DIGEST_LENGTH, '0');
  for (int i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(digest, &ctx);
  return Hex(digest);
}

static_assert(sizeof(SHA256_CTX) <= 112 && alignof(SHA256_CTX) <= 8);

Sha256Stream::Sha256Stream() { SHA256_Init(reinterpret_cast<SHA256_CTX*>(ctx_)); }

void Sha256Stream::Add(std::string_view data) {
  SHA256_Update(reinterpret_cast<SHA256_CTX*>(ctx_), data.data(), data.size());
}

std::string Sha256Stream::HexDigest() {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_Final(digest, reinterpret_cast<SHA256_CTX*>(ctx_));
  return Hex(digest);
}

}  // namespace baton

#include "util/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace baton {
namespace {

// OpenSSL 3's one-shot SHA256() looks the algorithm up on every call, which
// cost more than the hashing itself for ledger-sized inputs: fetch it once.
const EVP_MD* Sha256Md() {
  static const EVP_MD* const kMd = [] {
    const EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (md == nullptr) {
      // libcrypto without SHA-256 cannot run baton at all.
      std::fprintf(stderr, "baton: libcrypto has no SHA-256\n");
      std::abort();
    }
    return md;
  }();
  return kMd;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, Sha256Md(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * length, '0');
  for (unsigned int i = 0; i < length; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return out;
}

}  // namespace baton

// File: gzip.h
//
// gzip streams over zlib, for files too large to hold whole (the ledger's
// archives, engine/ledger/archive.h): a writer that compresses what it is
// given into a FileWrite (util/atomic_file.h), and a reader that hands a
// gzip file back one line at a time. Both keep the SHA-256 of the
// compressed bytes, which is what a file's digest is. `zcat` reads what the
// writer writes. Not thread-safe (one object per stream).

#ifndef BATON_SRC_UTIL_GZIP_H_
#define BATON_SRC_UTIL_GZIP_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "baton/status.h"
#include "util/atomic_file.h"
#include "util/sha256.h"

namespace baton {

class GzipWriter {
 public:
  // "level": zlib's 1 (fastest) to 9 (smallest).
  GzipWriter(FileWrite out, int level);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  // Compresses "data" (buffered: "out" sees it in pieces of up to 256 KB).
  Status Add(std::string_view data);
  // Ends the stream; the SHA-256 of every byte given to "out".
  Result<std::string> Finish();
  int64_t bytes_out() const { return bytes_out_; }

 private:
  Status Deflate(int flush);

  struct Stream;
  std::unique_ptr<Stream> z_;
  FileWrite out_;
  std::string pending_;  // uncompressed, not yet given to zlib
  Sha256Stream digest_;
  int64_t bytes_out_ = 0;
};

// Calls "line" with each line of the gzip file "path" (without its "\n"; a
// last line without one too), in order, stopping at the first error it
// returns. A line is at most "max_line" bytes. "sha256" receives the digest
// of the file's bytes. Errors name the path: a file that is not gzip, is
// cut short or corrupt (zlib's CRC), or holds a longer line.
Status ReadGzipLines(const std::string& path, size_t max_line,
                     const std::function<Status(std::string_view line)>& line,
                     std::string* sha256);

}  // namespace baton

#endif  // BATON_SRC_UTIL_GZIP_H_

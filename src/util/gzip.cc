#include "util/gzip.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace baton {
namespace {

constexpr size_t kChunk = 256 * 1024;
// zlib's windowBits for a gzip header and trailer rather than zlib's own.
constexpr int kGzipWindow = 16 + MAX_WBITS;

}  // namespace

struct GzipWriter::Stream {
  z_stream z{};
  bool open = false;
};

GzipWriter::GzipWriter(FileWrite out, int level) : z_(new Stream), out_(std::move(out)) {
  z_->open = deflateInit2(&z_->z, level, Z_DEFLATED, kGzipWindow, 8, Z_DEFAULT_STRATEGY) == Z_OK;
}

GzipWriter::~GzipWriter() {
  if (z_->open) deflateEnd(&z_->z);
}

Status GzipWriter::Deflate(int flush) {
  if (!z_->open) return InternalError("gzip: zlib could not start a stream (out of memory)");
  z_->z.next_in = reinterpret_cast<Bytef*>(pending_.data());
  z_->z.avail_in = static_cast<uInt>(pending_.size());
  std::string buffer(kChunk, '\0');
  int rc = Z_OK;
  do {
    z_->z.next_out = reinterpret_cast<Bytef*>(buffer.data());
    z_->z.avail_out = static_cast<uInt>(buffer.size());
    rc = deflate(&z_->z, flush);
    if (rc == Z_STREAM_ERROR) return InternalError("gzip: zlib's deflate failed");
    const size_t made = buffer.size() - z_->z.avail_out;
    if (made > 0) {
      const std::string_view piece(buffer.data(), made);
      digest_.Add(piece);
      bytes_out_ += static_cast<int64_t>(made);
      RETURN_IF_ERROR(out_(piece));
    }
  } while (z_->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  pending_.clear();
  return Status();
}

Status GzipWriter::Add(std::string_view data) {
  pending_.append(data);
  return pending_.size() >= kChunk ? Deflate(Z_NO_FLUSH) : Status();
}

Result<std::string> GzipWriter::Finish() {
  RETURN_IF_ERROR(Deflate(Z_FINISH));
  return digest_.HexDigest();
}

Status ReadGzipLines(const std::string& path, size_t max_line,
                     const std::function<Status(std::string_view line)>& line,
                     std::string* sha256) {
  // Closed on every way out, a throwing "line" included.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> owned(std::fopen(path.c_str(), "rbe"),
                                                        &std::fclose);
  std::FILE* file = owned.get();
  if (file == nullptr) return NotFoundError(path + ": cannot be opened: " + std::strerror(errno));
  z_stream z{};
  if (inflateInit2(&z, kGzipWindow) != Z_OK) {
    return InternalError("gzip: zlib could not start a stream (out of memory)");
  }
  struct InflateEnd {
    z_stream* z;
    ~InflateEnd() { inflateEnd(z); }
  } end_inflate{&z};
  Sha256Stream digest;
  std::string in(kChunk, '\0');
  std::string out(kChunk, '\0');
  std::string carry;  // the start of a line whose end has not come yet
  Status status;
  int rc = Z_OK;
  auto emit = [&](std::string_view text) -> Status {
    size_t start = 0;
    for (size_t nl = text.find('\n'); nl != std::string_view::npos;
         nl = text.find('\n', start)) {
      std::string_view piece = text.substr(start, nl - start);
      start = nl + 1;
      if (!carry.empty()) {
        carry.append(piece);
        piece = carry;
      }
      if (piece.size() > max_line) {
        return DataLossError(path + ": a line is longer than " + std::to_string(max_line) +
                             " bytes");
      }
      RETURN_IF_ERROR(line(piece));
      carry.clear();
    }
    carry.append(text.substr(start));
    if (carry.size() > max_line) {
      return DataLossError(path + ": a line is longer than " + std::to_string(max_line) +
                           " bytes");
    }
    return Status();
  };
  while (status.ok() && rc != Z_STREAM_END) {
    const size_t got = std::fread(in.data(), 1, in.size(), file);
    if (got == 0) {
      status = DataLossError(path + (std::ferror(file) ? ": cannot be read: " +
                                                             std::string(std::strerror(errno))
                                                       : ": ends before its gzip stream does "
                                                         "(cut short)"));
      break;
    }
    digest.Add(std::string_view(in.data(), got));
    z.next_in = reinterpret_cast<Bytef*>(in.data());
    z.avail_in = static_cast<uInt>(got);
    while (status.ok() && z.avail_in > 0 && rc != Z_STREAM_END) {
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        status = DataLossError(path + ": not a whole gzip file (zlib: " +
                               std::string(z.msg != nullptr ? z.msg : "error " + std::to_string(rc)) +
                               ")");
        break;
      }
      status = emit(std::string_view(out.data(), out.size() - z.avail_out));
    }
    if (status.ok() && rc == Z_STREAM_END) {
      // What follows the stream still belongs to the file's digest.
      std::string_view rest(reinterpret_cast<const char*>(z.next_in), z.avail_in);
      if (!rest.empty()) status = DataLossError(path + ": holds bytes after its gzip stream");
      for (size_t n; status.ok() && (n = std::fread(in.data(), 1, in.size(), file)) > 0;) {
        status = DataLossError(path + ": holds bytes after its gzip stream");
      }
    }
  }
  if (status.ok() && !carry.empty()) status = line(carry);
  if (status.ok() && sha256 != nullptr) *sha256 = digest.HexDigest();
  return status;
}

}  // namespace baton

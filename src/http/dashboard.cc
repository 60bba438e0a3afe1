#include "http/dashboard.h"

#include <span>

#include "model/embedded.h"
#include "util/json_util.h"
#include "util/sha256.h"

namespace baton {

// Generated from src/http/dashboard/* (src/http/CMakeLists.txt).
std::span<const EmbeddedFile> DashboardAssetFiles();

namespace {

std::string ContentType(std::string_view name) {
  const size_t dot = name.rfind('.');
  const std::string_view ext = dot == std::string_view::npos ? "" : name.substr(dot + 1);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "js") return "text/javascript; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  if (ext == "svg") return "image/svg+xml";
  if (ext == "png") return "image/png";
  if (ext == "json") return "application/json";
  return "application/octet-stream";
}

DashboardAsset Make(std::string_view name, std::string body) {
  DashboardAsset a;
  a.name = std::string(name);
  a.content_type = ContentType(name);
  a.etag = "\"" + Sha256Hex(body).substr(0, 32) + "\"";
  a.body = std::move(body);
  return a;
}

}  // namespace

std::optional<DashboardAsset> FindDashboardAsset(const std::string& ui_dir, std::string_view name) {
  if (name.empty() || name.front() == '.' || name.find('/') != std::string_view::npos ||
      name.find('\\') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  if (!ui_dir.empty()) {
    Result<std::string> text = ReadFile(ui_dir + "/" + std::string(name), int64_t{16} << 20);
    if (!text.ok()) return std::nullopt;
    return Make(name, std::move(text).value());
  }
  // Built once: the embedded files never change while the process runs.
  static const std::vector<DashboardAsset>* const kAssets = [] {
    auto* assets = new std::vector<DashboardAsset>();
    for (const EmbeddedFile& f : DashboardAssetFiles()) {
      assets->push_back(Make(f.name, std::string(f.text)));
    }
    return assets;
  }();
  for (const DashboardAsset& a : *kAssets) {
    if (a.name == name) return a;
  }
  return std::nullopt;
}

}  // namespace baton

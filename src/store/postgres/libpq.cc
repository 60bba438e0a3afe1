#include "store/postgres/libpq.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

namespace baton {
namespace {

// The library's soname: libpq has kept major version 5 since PostgreSQL 8.0.
constexpr const char* kLibpq = "libpq.so.5";

Libpq* g_libpq = nullptr;  // set once, by Load below

template <typename Function>
bool Resolve(void* handle, const char* name, Function& out) {
  out = reinterpret_cast<Function>(dlsym(handle, name));
  return out != nullptr;
}

Status Load() {
  void* handle = dlopen(kLibpq, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::string message = "a PostgreSQL store needs ";
    message += kLibpq;
    message += " (Debian: apt-get install libpq5): ";
    message += dlerror();
    return FailedPreconditionError(message);
  }
  Libpq lib;
  const char* missing = nullptr;
#define BATON_LIBPQ_RESOLVE(name) \
  if (!Resolve(handle, #name, lib.name)) missing = #name;
  BATON_LIBPQ_FUNCTIONS(BATON_LIBPQ_RESOLVE)
#undef BATON_LIBPQ_RESOLVE
  if (missing != nullptr) {
    std::string message = kLibpq;
    message += " has no ";
    message += missing;
    message += " (the libpq of PostgreSQL 14 or newer is needed)";
    return FailedPreconditionError(message);
  }
  g_libpq = new Libpq(lib);
  return Status();
}

}  // namespace

Status LoadLibpq() {
  static std::once_flag once;
  static Status* loaded = nullptr;
  std::call_once(once, [] { loaded = new Status(Load()); });
  return *loaded;
}

const Libpq& Pq() {
  if (g_libpq == nullptr) std::abort();  // LoadLibpq() was not called, or failed
  return *g_libpq;
}

}  // namespace baton

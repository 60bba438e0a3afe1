// File: store_location.h
//
// How a command finds its store, as git finds .git: --store, else
// $BATON_STORE, else the nearest .baton/baton.db in the current folder or
// one of its parents. Only `baton init` (and `baton serve`/`baton mcp` when
// nothing is found) make a new one, and no missing folder is ever created
// but init's own .baton/.

#ifndef BATON_SRC_CLI_STORE_LOCATION_H_
#define BATON_SRC_CLI_STORE_LOCATION_H_

#include <string>

#include "baton/status.h"

namespace baton {

struct GlobalOptions;

// The folder and file a store lives in when none is named.
inline constexpr char kStoreFolder[] = ".baton";
inline constexpr char kStoreFile[] = "baton.db";

enum class StoreUse {
  kExisting,      // every command but the two below: the store must exist
  kCreateIfNone,  // serve, mcp: a new store in ./.baton/ when none is found
  kCreate,        // init: a new store here (or at --store)
  kOptional,      // machines, ops: used when found, needed by none
};

struct StoreLocation {
  std::string path;      // as named, or absolute when found or defaulted
  bool named = false;    // from --store or $BATON_STORE
  std::string named_as;  // "--store PATH" or "BATON_STORE=PATH" when named
  bool exists = false;   // a file is there (always true for ":memory:")
  bool created = false;  // Prepare made .baton/ for it
  std::string skipped;   // why a store found walking up was not used
};

// Where the store of this command is, found or not (no file is touched).
StoreLocation LocateStore(const GlobalOptions& g);

// Checks "loc" against "use": NotFound with what to do when the store must
// exist and does not; for a new store, makes .baton/ when that is where it
// goes (never any other folder). Prints nothing.
Status PrepareStore(StoreUse use, StoreLocation& loc);

// `baton init`: makes the store and says what to do next.
int RunInit(const GlobalOptions& g);

}  // namespace baton

#endif  // BATON_SRC_CLI_STORE_LOCATION_H_

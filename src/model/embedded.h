// File: embedded.h
//
// Data files compiled into the binary (the built-in machine documents). The
// table is generated at build time by cmake/embed_files.cmake from
// src/model/machines/*.json; see src/model/CMakeLists.txt.

#ifndef BATON_SRC_MODEL_EMBEDDED_H_
#define BATON_SRC_MODEL_EMBEDDED_H_

#include <span>
#include <string_view>

namespace baton {

struct EmbeddedFile {
  const char* name;       // file name, e.g. "sgai.run.json"
  std::string_view text;  // the whole file
};

// The built-in machine files, sorted by name.
std::span<const EmbeddedFile> BuiltinMachineFiles();
// Genie's five built-in board templates (src/model/board_templates.json).
std::span<const EmbeddedFile> BuiltinBoardTemplateFiles();

}  // namespace baton

#endif  // BATON_SRC_MODEL_EMBEDDED_H_

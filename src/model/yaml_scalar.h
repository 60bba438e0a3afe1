// File: yaml_scalar.h
//
// What a plain (untagged, unquoted) YAML scalar means under the YAML 1.2
// core schema — null, a boolean, an integer, a float or the string itself —
// for the readers that turn yaml-cpp nodes into JSON (graph definitions,
// sgai's GOAL.md front matter). Pure and thread-safe.

#ifndef BATON_SRC_MODEL_YAML_SCALAR_H_
#define BATON_SRC_MODEL_YAML_SCALAR_H_

#include <string>

#include "util/json_util.h"

namespace baton {

Json PlainYamlScalar(const std::string& s);

}  // namespace baton

#endif  // BATON_SRC_MODEL_YAML_SCALAR_H_
